package shell

import "strings"

// POSIX quotes for a POSIX shell: a word of letters, digits and
// -_./=+:,@% stays as it is; anything else goes in single quotes, inside
// which only a single quote needs care (it ends the quoting, is escaped,
// and reopens it).
var POSIX Dialect = posix{}

type posix struct{}

func (posix) Quote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./=+:,@%", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (d posix) Join(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = d.Quote(a)
	}
	return strings.Join(q, " ")
}

// WithEnv: NAME=value prog args, the assignment for that command only.
func (d posix) WithEnv(name, value string, argv []string) string {
	return name + "=" + d.Quote(value) + " " + d.Join(argv)
}
