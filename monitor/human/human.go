// Package human formats numbers for people, the same way in the command
// line's tables and the tray's windows.
package human

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Bytes is "40.0 GiB".
func Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Duration is a process's runtime in a column: "42s", "3m05s", "2h10m", "3d".
func Duration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// Truncate shortens s to n runes, ending in "…" when cut.
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Shorten fits s, a command line or a sentence naming paths, in n runes.
// Where Truncate would cut a path in the middle of a name, the leading
// folders of the paths up to that point go first
// ("/home/ada/work/llm/train.py" becomes "…/llm/train.py"), so that what
// names a thing, a path's last parts, stays whole; the end is cut only
// outside a path, or when no folder is left to drop.
func Shorten(s string, n int) string {
	if n < 2 || utf8.RuneCountInString(s) <= n {
		return s
	}
	fields := strings.Split(s, " ")
	for {
		// The field the cut falls in, and the longest path with a folder
		// to drop up to it.
		at, pos := -1, 0
		for i, f := range fields {
			pos += utf8.RuneCountInString(f) + 1
			if pos > n-1 {
				at = i
				break
			}
		}
		if at < 0 {
			break
		}
		if _, ok := dropFolder(fields[at]); !ok && !strings.ContainsAny(fields[at], `/\`) {
			break // the cut is outside a path
		}
		best, cut := -1, ""
		for i, f := range fields[:at+1] {
			if c, ok := dropFolder(f); ok && (best < 0 || len(f) > len(fields[best])) {
				best, cut = i, c
			}
		}
		if best < 0 {
			break
		}
		fields[best] = cut
		if out := strings.Join(fields, " "); utf8.RuneCountInString(out) <= n {
			return out
		}
	}
	return Truncate(strings.Join(fields, " "), n)
}

// dropFolder is path without its first folder, written "…/rest" (an
// option's value keeps its option: "--prefix=…/rest"); false
// when that would leave fewer than two parts (a folder and a name), or
// for a URL.
func dropFolder(path string) (string, bool) {
	if k, v, ok := strings.Cut(path, "="); ok && strings.HasPrefix(k, "-") {
		// An option's value (--prefix=/opt/env): the option stays named.
		c, ok := dropFolder(v)
		return k + "=" + c, ok
	}
	if strings.Contains(path, "://") {
		return path, false
	}
	body := strings.TrimLeft(strings.TrimPrefix(path, "…"), `/\`)
	i := strings.IndexAny(body, `/\`)
	if i < 0 || strings.IndexAny(body[i+1:], `/\`) < 0 {
		return path, false
	}
	return "…" + body[i:], true
}
