package procs

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
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
// --auth=, Authorization.
var secretWords = []string{"pass", "auth", "authorization", "cookie", "sas", "otp"}

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

var (
	// urlCreds matches user:password@ in a URL anywhere in an argument.
	urlCreds = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*):[^/\s@]*@`)
	// queryParam matches one key=value of a URL's query or fragment.
	queryParam = regexp.MustCompile(`([?&#;])([^=&#\s]+)=([^&#\s]*)`)
	// tokenShape matches the tokens that announce themselves: Hugging
	// Face, GitHub, OpenAI-style, Slack, AWS access key IDs, JWTs.
	tokenShape = regexp.MustCompile(`\b(hf_[A-Za-z0-9]{16,}|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}|sk-[A-Za-z0-9_-]{16,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})\b`)
	// authScheme matches "Bearer X" and "Basic X" wherever they stand.
	authScheme = regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{6,}`)
)

// Redact hides secrets in a command line before it is shown or written.
// Forms covered: --token=X and --token X (any option or variable whose
// name says secret, see secretName), HF_TOKEN=X and MYSQL_PWD=X
// assignments, a program's own password options (mysql -pX, sshpass -p X,
// redis-cli -a X, curl -u user:X), headers ("Authorization: Bearer X"),
// "Bearer X" on its own, passwords in URLs (https://user:***@host) and
// secret query parameters (?token=***), and tokens whose shape gives them
// away (hf_…, ghp_…, sk-…). The argument count is kept; an option named
// like a secret with no value of its own hides the argument after it.
func Redact(args []string) []string {
	out := make([]string, len(args))
	prog, at := programOf(args)
	short, userPass := shortSecretFlags[prog], userPassFlags[prog]
	hideNext, userNext := false, false
	for i, a := range args {
		switch {
		case hideNext:
			out[i], hideNext = "***", false
			continue
		case userNext:
			out[i], userNext = hidePassword(a), false
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
		if strings.HasPrefix(a, "-") && !strings.Contains(a, "=") {
			if secretName(a) {
				hideNext = true
			}
			out[i] = redactValue(a)
			continue
		}
		out[i] = redactValue(a)
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
	a = urlCreds.ReplaceAllString(a, "$1:***@")
	a = queryParam.ReplaceAllStringFunc(a, func(m string) string {
		sub := queryParam.FindStringSubmatch(m)
		if secretName(sub[2]) && sub[3] != "" {
			return sub[1] + sub[2] + "=***"
		}
		return m
	})
	a = authScheme.ReplaceAllStringFunc(a, func(m string) string {
		scheme, _, _ := strings.Cut(m, " ")
		return scheme + " ***"
	})
	return tokenShape.ReplaceAllString(a, "***")
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

// wrappers run the program named after their own options and
// assignments: `sudo mysql -pX`, `env MYSQL_PWD=X mysqldump`.
var wrappers = []string{"env", "sudo", "doas", "nohup", "nice", "ionice", "time", "timeout", "stdbuf", "setsid", "exec", "chrt", "taskset"}

// programOf returns the program whose options args holds (past any
// wrappers) and its index; "" and -1 when there is none.
func programOf(args []string) (string, int) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if i > 0 && (strings.HasPrefix(a, "-") || strings.Contains(a, "=") || isNumber(a)) {
			continue // a wrapper's option, an assignment, timeout's duration
		}
		name := programName(a)
		if !slices.Contains(wrappers, name) {
			return name, i
		}
	}
	return "", -1
}

func isNumber(s string) bool {
	return s != "" && strings.Trim(s, "0123456789.smhd") == ""
}

// programName is argv[0]'s base name without a Windows .exe, lowercase.
func programName(argv0 string) string {
	base := filepath.Base(strings.ReplaceAll(argv0, `\`, "/"))
	return strings.TrimSuffix(strings.ToLower(base), ".exe")
}
