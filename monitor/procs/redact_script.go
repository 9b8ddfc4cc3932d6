package procs

import "strings"

// One argument may hold a whole shell command line: bash -c "mysql -pX",
// su -c '…', env -S '…', watch 'psql …', ssh host 'curl -u a:b …', or a
// process title that setproctitle wrote as one string. Read as one value
// its secrets hide behind the first word. redactScript reads such an
// argument as a shell splits it (words, quotes, the operators between
// commands), redacts each command as an argv of its own, so that its
// wrappers and its program's own password options count, and writes the
// changed words back in place: the rest of the text stays as it was, to
// stay readable.

// maxScriptDepth bounds strings inside strings (bash -c "sudo sh -c '…'").
const maxScriptDepth = 4

// shellWord is one word or operator of a shell command line.
type shellWord struct {
	start, end int    // its bytes in the text, quotes included
	value      string // the word as the shell reads it, quotes removed
	op         bool   // an operator: ; & | ( ) < > ` or a newline
}

// shellOps are the characters that end a word and form operators;
// commandEnds are those that end a command (< and > only redirect).
const (
	shellOps    = ";&|()<>`\n"
	commandEnds = ";&|()`\n"
)

// redactScript redacts the shell command line s command by command.
func redactScript(s string, depth int) string {
	words := shellWords(s)
	var b strings.Builder
	last := 0
	for len(words) > 0 {
		n := 0
		for n < len(words) && !(words[n].op && strings.ContainsAny(words[n].value, commandEnds)) {
			n++
		}
		var cmd []shellWord
		var argv []string
		for _, w := range words[:n] {
			if !w.op {
				cmd, argv = append(cmd, w), append(argv, w.value)
			}
		}
		for i, r := range redact(argv, depth) {
			if r == argv[i] {
				continue
			}
			w := cmd[i]
			b.WriteString(s[last:w.start])
			b.WriteString(requote(s[w.start:w.end], r))
			last = w.end
		}
		words = words[min(n+1, len(words)):]
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// requote writes a redacted word in the quotes its original stood in, when
// it was one quoted string ('…' or "…"); otherwise as it is.
func requote(orig, value string) string {
	if len(orig) >= 2 && (orig[0] == '\'' || orig[0] == '"') && orig[len(orig)-1] == orig[0] && !strings.Contains(value, orig[:1]) {
		return orig[:1] + value + orig[:1]
	}
	return value
}

// shellWords splits s as a POSIX shell does, closely enough to find
// commands and their arguments: blanks separate words; '…' is literal;
// in "…" a backslash escapes $ ` " \ and a newline; outside quotes it
// escapes what a shell would otherwise read specially, and stays as it
// is before a letter, a digit, . _ or - (a Windows path, C:\Users\ana).
// An unterminated quote runs to the end.
func shellWords(s string) []shellWord {
	var words []shellWord
	i := 0
	for i < len(s) {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case strings.IndexByte(shellOps, c) >= 0:
			j := i + 1
			for j < len(s) && strings.IndexByte(shellOps, s[j]) >= 0 {
				j++
			}
			words = append(words, shellWord{start: i, end: j, value: s[i:j], op: true})
			i = j
		default:
			w := shellWord{start: i}
			var b strings.Builder
			i = readWord(s, i, &b)
			w.end, w.value = i, b.String()
			words = append(words, w)
		}
	}
	return words
}

// readWord reads the word starting at i into b and returns where it ends.
func readWord(s string, i int, b *strings.Builder) int {
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || strings.IndexByte(shellOps, c) >= 0:
			return i
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				b.WriteString(s[i+1:])
				return len(s)
			}
			b.WriteString(s[i+1 : i+1+end])
			i += end + 2
		case c == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
				}
				b.WriteByte(s[i])
			}
			i++ // the closing quote
		case c == '\\' && i+1 < len(s) && !plainAfterBackslash(s[i+1]):
			b.WriteByte(s[i+1])
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return min(i, len(s))
}

func plainAfterBackslash(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c >= 0x80
}
