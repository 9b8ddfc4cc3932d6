package procs

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The report's README promises that the bundle holds no secrets, and
// `ps --json`, the culprit of an overwrite and the tray show command
// lines of every user's processes: Redact is the one place that keeps
// that promise. It errs on the side of hiding: a hidden port number costs
// nothing, a shown password costs a credential.

// secretSuffixes end the words of option and variable names whose value
// is a secret: HF_TOKEN, PGPASSWORD, MYSQL_PWD, --client-secret,
// api_key (joined to "apikey"). A suffix, so PGPASSWORD and APITOKEN
// count; a whole word, so --tokenizer and --max-tokens do not.
var secretSuffixes = []string{"token", "secret", "password", "passwd", "passphrase", "pwd", "apikey", "credential", "credentials", "privatekey", "accesskey", "secretkey", "accountkey"}

// secretWords are whole words that name a secret on their own: --pass,
// --auth=, Authorization, and a signed URL's signature (Azure SAS's
// sig=, S3's X-Amz-Signature=).
var secretWords = []string{"pass", "auth", "authorization", "cookie", "sas", "otp", "sig", "signature"}

// nameWords splits an option or variable name into lowercase words:
// "--hf-token" -> hf, token; "AWS_SECRET_ACCESS_KEY" -> aws, secret,
// access, key.
func nameWords(name string) []string {
	return strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
}

// secretName reports whether an option or variable name says its value
// is a secret. Adjacent words are also read joined ("api key",
// "private key"), so --api-key and PRIVATE_KEY count while --key-file
// and --sort-key do not.
func secretName(name string) bool {
	words := nameWords(name)
	if len(words) == 1 && words[0] == "key" {
		return true // --key VALUE, key=… in a query: the key itself
	}
	for i, w := range words {
		if slices.Contains(secretWords, w) || hasSecretSuffix(w) {
			return true
		}
		if i+1 < len(words) && hasSecretSuffix(w+words[i+1]) {
			return true
		}
	}
	return false
}

func hasSecretSuffix(w string) bool {
	for _, s := range secretSuffixes {
		if strings.HasSuffix(w, s) {
			return true
		}
	}
	return false
}

// shortSecretFlags are the one-letter options that take a password in
// programs people run beside training jobs. One letter means different
// things to different programs (-p is a port to ssh and psql, a parent
// folder to mkdir, the interpreter to `uv pip`), so they are per program.
// The value may be attached (mysql -pSECRET) or follow (sshpass -p X).
var shortSecretFlags = map[string][]string{
	"mysql": {"-p"}, "mysqldump": {"-p"}, "mysqladmin": {"-p"}, "mysqlimport": {"-p"}, "mysqlshow": {"-p"},
	"mariadb": {"-p"}, "mariadb-dump": {"-p"}, "mariadb-admin": {"-p"},
	"sshpass":   {"-p"},
	"redis-cli": {"-a"},
	"mongo":     {"-p"}, "mongosh": {"-p"}, "mongodump": {"-p"}, "mongorestore": {"-p"},
}

// userPassFlags take USER:PASSWORD (curl -u, wget --user is only a name).
var userPassFlags = map[string][]string{
	"curl": {"-u", "--user", "--proxy-user", "-U"},
}

// Compiled at first use, not at each start of the program: a check
// runs none of them, and regexps were a seventh of its start (docs/performance.md).
var (
	// urlCreds matches user:password@ in a URL anywhere in an argument.
	urlCreds = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*):[^/\s@]*@`) })
	// queryParam matches one key=value of a URL's query or fragment.
	queryParam = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([?&#;])([^=&#\s]+)=([^&#\s]*)`) })
	// tokenShape matches the tokens that announce themselves: Hugging
	// Face, GitHub, OpenAI-style, Slack, AWS access key IDs, JWTs.
	tokenShape = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(hf_[A-Za-z0-9]{16,}|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}|sk-[A-Za-z0-9_-]{16,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})\b`)
	})
	// authScheme matches "Bearer X" and "Basic X" wherever they stand.
	authScheme = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{6,}`)
	})
	// secretPair matches name=value and name: value inside free text (a
	// python -c program, a libpq connection string "host=db password=x",
	// JSON's "api_key": "x"): the name, what joins it to its value (a
	// closing quote, blanks, = or :), and the value, quoted (with
	// backslash escapes) or up to a blank or a delimiter.
	secretPair = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.-]*)(["']?\s*[=:]\s*)("(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|[^\s"',;&)}\]]+)`)
	})
)

// Redact hides secrets in a command line before it is shown or written.
// Forms covered: --token=X and --token X (any option or variable whose
// name says secret, see secretName), HF_TOKEN=X and MYSQL_PWD=X
// assignments, a program's own password options (mysql -pX, sshpass -p X,
// redis-cli -a X, curl -u user:X) past any wrappers and their options
// (sudo -u bob mysql -pX: redact_program.go), headers ("Authorization:
// Bearer X"), "Bearer X" on its own, passwords in URLs
// (https://user:***@host) and secret query parameters (?token=***),
// name=value and "name": "value" inside free text (python -c '…', a libpq
// connection string "host=db password=X"), tokens whose shape gives them
// away (hf_…, ghp_…, sk-…), and all of these inside an argument that is a
// shell command line (bash -c "mysql -pX": redact_script.go). The argument
// count is kept; an option named like a secret with no value of its own
// (--password X, or --password= X) hides the argument after it, unless
// that is --, which ends the options.
func Redact(args []string) []string { return redact(args, 0) }

// redact is Redact inside depth shell strings.
func redact(args []string, depth int) []string {
	out := make([]string, len(args))
	prog, at := programOf(args)
	short, userPass := shortSecretFlags[prog], userPassFlags[prog]
	script, scriptFrom := scriptArg(args, prog, at)
	hideNext, userNext := false, false
	for i, a := range args {
		switch {
		case (hideNext || userNext) && a == "--":
			out[i], hideNext, userNext = a, false, false // the options end here: no value came
			continue
		case hideNext:
			out[i], hideNext = "***", false
			continue
		case userNext:
			out[i], userNext = hidePassword(a), false
			continue
		case i == script && depth < maxScriptDepth:
			out[i] = a[:scriptFrom] + redactScript(a[scriptFrom:], depth+1)
			continue
		}
		if i > at && slices.Contains(userPass, a) {
			out[i], userNext = a, true
			continue
		}
		if i > at && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") {
			if f := shortFlagOf(a, short); f != "" {
				if a == f {
					out[i], hideNext = a, true
				} else {
					out[i] = f + "***"
				}
				continue
			}
		}
		if strings.HasPrefix(a, "-") {
			// --password X, and --password= X: an empty value, then maybe
			// the password as a word of its own (the safe side).
			if name, v, _ := strings.Cut(a, "="); v == "" && secretName(name) {
				hideNext = true
			}
		}
		out[i] = redactValue(a)
		if depth < maxScriptDepth && strings.ContainsAny(out[i], " \t\n") {
			out[i] = redactScript(out[i], depth+1)
		}
	}
	return out
}

// redactValue hides what one argument holds on its own: an assignment to
// a secret name, a secret header, and secrets inside URLs and free text.
func redactValue(a string) string {
	if k, v, ok := strings.Cut(a, "="); ok && v != "" && !strings.Contains(k, "://") && !strings.ContainsAny(k, " /?&") && secretName(k) {
		return k + "=***"
	}
	// A header: "Authorization: Bearer X", "X-Api-Key:X".
	if k, v, ok := strings.Cut(a, ":"); ok && !strings.ContainsAny(k, " /") && secretName(k) && strings.TrimSpace(v) != "" && !strings.HasPrefix(v, "//") {
		sep := ":"
		if strings.HasPrefix(v, " ") {
			sep = ": "
		}
		return k + sep + "***"
	}
	// Each pattern runs only where what it needs is there: most arguments
	// hold none of it, and a process's first scan redacts every one.
	if strings.Contains(a, "://") && strings.Contains(a, "@") {
		a = urlCreds().ReplaceAllString(a, "$1:***@")
	}
	if strings.Contains(a, "=") && strings.ContainsAny(a, "?&#;") {
		a = queryParam().ReplaceAllStringFunc(a, func(m string) string {
			sub := queryParam().FindStringSubmatch(m)
			if secretName(sub[2]) && sub[3] != "" {
				return sub[1] + sub[2] + "=***"
			}
			return m
		})
	}
	if strings.ContainsAny(a, " \t\n") {
		a = authScheme().ReplaceAllStringFunc(a, func(m string) string {
			scheme, _, _ := strings.Cut(m, " ")
			return scheme + " ***"
		})
	}
	if strings.ContainsAny(a, "=:") {
		a = secretPair().ReplaceAllStringFunc(a, hidePairValue)
	}
	if slices.ContainsFunc(tokenPrefixes, func(p string) bool { return strings.Contains(a, p) }) {
		a = tokenShape().ReplaceAllString(a, "***")
	}
	return a
}

// tokenPrefixes are how tokenShape's tokens begin.
var tokenPrefixes = []string{"hf_", "gh", "github_pat_", "sk-", "xox", "AKIA", "eyJ"}

// hidePairValue hides the value of a secretPair match whose name is a
// secret's, in the quotes it stood in.
func hidePairValue(m string) string {
	sub := secretPair().FindStringSubmatch(m)
	if !secretName(sub[1]) {
		return m
	}
	hidden := "***"
	if q := sub[3][0]; q == '"' || q == '\'' {
		hidden = string(q) + hidden + string(q)
	}
	return sub[1] + sub[2] + hidden
}

// shortFlagOf returns which of flags a is (-p, or -pVALUE attached).
func shortFlagOf(a string, flags []string) string {
	for _, f := range flags {
		if strings.HasPrefix(a, f) {
			return f
		}
	}
	return ""
}

// hidePassword turns user:password into user:***.
func hidePassword(a string) string {
	if user, _, ok := strings.Cut(a, ":"); ok {
		return user + ":***"
	}
	return a
}

// RedactLine hides the secrets in one line of a program's own output
// (pip's "Looking in indexes: https://mirror/whl/cu124?token=…", an
// error that echoes a URL) as Redact hides them in an argument.
func RedactLine(line string) string { return redactValue(line) }
