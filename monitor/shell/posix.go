package shell

import (
	"fmt"
	"strings"
)

// POSIX quotes for a POSIX shell: a word of letters, digits and
// -_./=+:,@% stays as it is; anything else goes in single quotes, inside
// which only a single quote needs care (it ends the quoting, is escaped,
// and reopens it).
//
// A word holding a character a terminal acts on (a control character, a
// bidi control) or a byte that is not UTF-8 goes in $'…' instead, with
// those written as escapes (\x1b, \n, \t, \xe9): every text output shows
// such characters as escapes (human.Visible), and inside '…' the escape
// shown would be pasted as four characters, not the byte. $'…' reads the
// same as it is shown, and pastes back to the exact bytes in bash, zsh,
// ksh and any shell of POSIX.1-2024 (not in dash 0.5.12, Debian 12's sh, nor in
// fish).
var POSIX Dialect = posix{}

type posix struct{}

func (posix) Quote(s string) string {
	if s == "" {
		return "''"
	}
	if needsEscapes(s) {
		return dollarQuoted(s)
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

// dollarQuoted writes s as $'…': a backslash and a single quote escaped,
// a newline, tab and carriage return by name, and every other byte of a
// character needsEscapes names (and every byte that is not UTF-8) as
// \xHH. A shell may read more than two hex digits after \x (POSIX leaves
// it unspecified), so a byte followed by a hex digit is written in octal
// instead (\033), which is never longer than three digits.
func dollarQuoted(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, n := decodeRune(s[i:])
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteByte(s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0 || actsOnTerminal(r):
			for j := i; j < i+n; j++ {
				if j+1 < len(s) && isHexDigit(s[j+1]) {
					fmt.Fprintf(&b, `\%03o`, s[j])
				} else {
					fmt.Fprintf(&b, `\x%02x`, s[j])
				}
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteByte('\'')
	return b.String()
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
