package shell

import "strings"

// quote is POSIX quoting: a word of letters, digits and -_./=+:,@% stays as
// it is; anything else goes in single quotes, inside which only a single
// quote needs care (it ends the quoting, is escaped, and reopens it).
func quote(s string) string {
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
