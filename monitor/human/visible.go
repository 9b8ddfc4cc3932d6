package human

import (
	"fmt"
	"io"
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
func Visible(s string) string { return escape(s, false) }

// escape is Visible; with lines, newlines and tabs are kept as they are.
func escape(s string, lines bool) string {
	i := firstUnsafe(s, lines)
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
		case lines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
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

// firstUnsafe is the byte offset of the first character escape changes,
// or -1: most text has none, and is returned without a copy.
func firstUnsafe(s string, lines bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 || c == 0x7f) && !(lines && (c == '\n' || c == '\t')) {
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

// NewWriter writes to w what it is given with every character Visible
// escapes shown as an escape, except newlines and tabs: for the whole
// output of a command that writes no escapes of its own (fix, and every
// command's error messages), so that a path or an installer's output
// reaches the terminal as text.
func NewWriter(w io.Writer) io.Writer { return visibleWriter{w} }

type visibleWriter struct{ w io.Writer }

func (v visibleWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(v.w, escape(string(p), true)); err != nil {
		return 0, err
	}
	return len(p), nil
}
