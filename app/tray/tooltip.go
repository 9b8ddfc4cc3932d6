package tray

import "unicode/utf16"

// cutUTF16 is s in at most n UTF-16 code units, ending in "…" when cut,
// never splitting a surrogate pair.
func cutUTF16(s string, n int) string {
	if len(utf16.Encode([]rune(s))) <= n {
		return s
	}
	units := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if units+w > n-1 { // room for "…", one unit
			return s[:i] + "…"
		}
		units += w
	}
	return s
}
