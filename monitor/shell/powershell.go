package shell

import (
	"fmt"
	"strings"
)

// PowerShell quotes for PowerShell (5.1, which Windows ships, and 7). A
// word that PowerShell reads as plain text in argument mode stays as it
// is; anything else goes in double quotes, inside which the characters
// PowerShell still reads are escaped with a backtick: the backtick itself,
// $ (a variable or subexpression) and the double quotes, including the
// typographic ones (“ ” „), which PowerShell takes for " as well. A line
// whose program is quoted starts with the call operator (&): a quoted
// string alone is an expression that PowerShell prints, not runs. A
// control character is written as an escape PowerShell 5.1 reads (`n,
// $([char]0x1b)): the command shown is text, and pastes back (psQuoted).
//
// Single quotes would need no escapes, but a Windows path holds a ' more
// often ("O'Brien") than a $ or a backtick, and the double-quoted form is
// the one Windows Terminal's users see in Microsoft's own documentation.
var PowerShell Dialect = powerShell{}

type powerShell struct{}

func (powerShell) Quote(s string) string {
	if psBare(s) {
		return s
	}
	return psQuoted(s)
}

func (d powerShell) Join(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = d.Quote(a)
	}
	line := strings.Join(q, " ")
	if len(argv) > 0 && !psBare(argv[0]) {
		line = "& " + line
	}
	return line
}

// WithEnv: PowerShell has no per-command assignment; the variable is set
// for the session, then the command runs: $env:NAME = "value"; & "…" ….
func (d powerShell) WithEnv(name, value string, argv []string) string {
	return "$env:" + name + " = " + psQuoted(value) + "; " + d.Join(argv)
}

// PowerShellScript is the line that runs the script (or program) at path
// in PowerShell: `& "C:\…\Activate.ps1"`, quoted whatever the path holds.
func PowerShellScript(path string) string { return "& " + psQuoted(path) }

// psEscaped are the characters PowerShell reads inside double quotes.
const psEscaped = "`$\"\u201c\u201d\u201e"

// psNamed are the control characters PowerShell 5.1 has a backtick escape
// for inside double quotes (about_Special_Characters). `e (ESC) and
// `u{…} are PowerShell 6 and later: every other character a terminal acts
// on is written as the subexpression $([char]0x1b), which 5.1 reads too.
var psNamed = map[rune]byte{0: '0', '\a': 'a', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't', '\v': 'v'}

// psQuoted writes s in double quotes with its special characters escaped.
// A control character is written as an escape, so the command shown is
// text that pastes back to the same string. A string is UTF-16 to
// PowerShell: an unpaired surrogate, which Go reads from a Windows name as
// WTF-8, is written as that [char]; a byte that is neither (no Windows
// name holds one) as the [char] of the same number.
func psQuoted(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := decodeRune(s[i:])
		if r < 0 {
			r, n = wtf8Surrogate(s[i:])
		}
		switch c, named := psNamed[r]; {
		case strings.ContainsRune(psEscaped, r):
			b.WriteByte('`')
			b.WriteRune(r)
		case named:
			b.WriteByte('`')
			b.WriteByte(c)
		case r < 0:
			fmt.Fprintf(&b, "$([char]0x%02x)", s[i])
		case actsOnTerminal(r) || r >= 0xd800 && r <= 0xdfff:
			fmt.Fprintf(&b, "$([char]0x%02x)", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteByte('"')
	return b.String()
}

// wtf8Surrogate decodes an unpaired surrogate written in WTF-8 at the
// start of s (ED A0–BF 80–BF), or returns -1 and 1.
func wtf8Surrogate(s string) (rune, int) {
	if len(s) >= 3 && s[0] == 0xed && s[1] >= 0xa0 && s[1] <= 0xbf && s[2] >= 0x80 && s[2] <= 0xbf {
		return 0xd000 | rune(s[1]&0x3f)<<6 | rune(s[2]&0x3f), 3
	}
	return -1, 1
}

// psBare reports whether PowerShell reads s unquoted as the one word s:
// ASCII letters, digits and -_./\=+: only (no space, quote, $, `, @, #,
// comma, semicolon, parenthesis, brace, redirection, & or %), starting
// (after any leading dashes) with a letter, so it is neither a number
// that PowerShell would rewrite (0x10 is passed as 16, 1kb as 1024, 007
// as 7), a dot-sourcing or splatting, nor the stop-parsing token --%. A
// switch like -3 (py -3) reads as itself and stays bare.
func psBare(s string) bool {
	rest := strings.TrimLeft(s, "-")
	if len(rest) < len(s) && psPlainInteger(rest) {
		return true
	}
	if rest == "" || !(rest[0] >= 'a' && rest[0] <= 'z' || rest[0] >= 'A' && rest[0] <= 'Z') {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(`-_./\=+:`, c)) {
			return false
		}
	}
	return true
}

// psPlainInteger reports whether s is a decimal integer PowerShell writes
// back as the same text (no leading zero, no suffix).
func psPlainInteger(s string) bool {
	if s == "" || s[0] == '0' {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
