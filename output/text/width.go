package text

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"

	"github.com/gpucanary/gpucanary/monitor/human"
)

// runeWidth is how many terminal columns r takes: two for East Asian wide
// and fullwidth characters, none for combining marks and joiners, one
// otherwise.
func runeWidth(r rune) int {
	switch {
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == '\u200d':
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// columns is how many terminal columns s takes. The only escapes in a
// line this package writes are its own colour codes (ESC [ … m); they take
// none.
func columns(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if j := sgrEnd(s, i); j > i {
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runeWidth(r)
		i += size
	}
	return n
}

// sgrEnd is the end of the colour code starting at s[i], or i when none
// starts there.
func sgrEnd(s string, i int) int {
	if !strings.HasPrefix(s[i:], "\x1b[") {
		return i
	}
	for j := i + 2; j < len(s); j++ {
		if s[j] == 'm' {
			return j + 1
		}
		if (s[j] < '0' || s[j] > '9') && s[j] != ';' {
			return i
		}
	}
	return i
}

// fit cuts s to at most w columns, ending in "…" when cut; colour codes
// are kept whole, and one left open by the cut is closed.
func fit(s string, w int) string {
	if columns(s) <= w {
		return s
	}
	var b strings.Builder
	n, open := 0, false
	for i := 0; i < len(s); {
		if j := sgrEnd(s, i); j > i {
			code := s[i:j]
			b.WriteString(code)
			open = code != reset
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		rw := runeWidth(r)
		if n+rw > w-1 {
			break
		}
		b.WriteString(s[i : i+size])
		n += rw
		i += size
	}
	b.WriteString("…")
	if open {
		b.WriteString(reset)
	}
	return b.String()
}

// fitLines fits each line of s to w columns.
func fitLines(s string, w int) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		lines[i] = fit(body, w)
		if nl {
			lines[i] += "\n"
		}
	}
	return strings.Join(lines, "")
}

// cell is s made visible and cut to w columns, for a table.
func cell(s string, w int) safe {
	return safe(fit(human.Visible(s), w))
}

// pad fills s (already visible) with spaces to w columns, on the right or,
// for numbers, on the left.
func pad(s string, w int, right bool) string {
	n := columns(s)
	if n >= w {
		return s
	}
	if right {
		return strings.Repeat(" ", w-n) + s
	}
	return s + strings.Repeat(" ", w-n)
}

// cellLeft is s made visible and, when over w columns, cut from the left
// ("…/proj/.venv"): the end of a path is what tells two apart.
func cellLeft(s string, w int) safe {
	v := human.Visible(s)
	if columns(v) <= w || w < 2 {
		return safe(fit(v, w))
	}
	runes := []rune(v)
	n, i := 1, len(runes) // "…" takes one
	for i > 0 && n+runeWidth(runes[i-1]) <= w {
		i--
		n += runeWidth(runes[i])
	}
	return safe("…" + string(runes[i:]))
}
