package human

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Visible makes s safe to write to a terminal or a Markdown file: every
// character that would act instead of show is written as an escape a
// person can read. Paths, argv, user names and package metadata come from
// other users and other programs; a process whose argv[0] holds
// "ESC ] 0;…" would otherwise retitle, clear or rewrite the terminal of
// whoever runs `gpucanary ps` (issue 15).
//
// Shown as escapes:
//   - C0 controls and DEL: \t, \n and \r by name, the others as \x1b;
//   - C1 controls (U+0080–U+009F, which some terminals obey as 8-bit
//     CSI/OSC), as \u009b;
//   - Unicode's bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE and
//     its kin, which reorder what follows) and the line and paragraph
//     separators, as \u202e;
//   - bytes that are not UTF-8 (a Linux path may hold any byte but NUL
//     and /), as \xe9.
//
// A backslash stays as it is (Windows paths): the result is for reading,
// not for parsing back. JSON output keeps the real text instead.
func Visible(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// firstUnsafe is the byte offset of the first character Visible escapes,
// or -1: most text has none, and is returned without a copy.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

// unsafeRune reports a non-ASCII rune that acts on a terminal or on the
// text around it.
func unsafeRune(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r)
}
