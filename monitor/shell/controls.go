package shell

import (
	"unicode"
	"unicode/utf8"
)

// The characters a terminal acts on instead of showing them: the set
// every text output of GPU Canary writes as escapes (human.Visible; this
// leaf imports nothing of GPU Canary's, and output/text's tests hold the
// two to the same set). A word holding one is written with escapes in
// both dialects, so that the command shown is text and pastes back to the
// exact characters.

// actsOnTerminal reports C0 controls and DEL, C1 controls (U+0080–U+009F),
// the line and paragraph separators and Unicode's bidirectional controls.
func actsOnTerminal(r rune) bool {
	return r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r)
}

// needsEscapes reports whether s holds a character a terminal acts on or
// a byte that is not UTF-8.
func needsEscapes(s string) bool {
	for i := 0; i < len(s); {
		r, n := decodeRune(s[i:])
		if r < 0 || actsOnTerminal(r) {
			return true
		}
		i += n
	}
	return false
}

// decodeRune is utf8.DecodeRuneInString with -1 for a byte that is not
// UTF-8 (a Linux path may hold any byte but NUL and /).
func decodeRune(s string) (rune, int) {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && n <= 1 {
		return -1, 1
	}
	return r, n
}
