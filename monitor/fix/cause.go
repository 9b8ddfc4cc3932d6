package fix

import "strings"

// How many of the installer's lines a failed repair quotes: its error
// lines, else its last lines.
const (
	maxCauseLines = 8
	maxTailLines  = 5
)

// causeLines keeps what a failed repair quotes of the installer's output:
// its own error lines (pip's "ERROR: …", uv's "error: …" with the
// indented "Caused by: …" lines under it, uv's "× No solution found …"
// with its "╰─▶ …" lines), else its last lines. That is where the real
// cause is said (no network, no matching distribution, disk full), which
// "exit status 1" is not. It keeps a bounded number of lines whatever the
// installer prints.
type causeLines struct {
	errors []string // the last maxCauseLines error lines
	tail   []string // the last maxTailLines non-empty lines
	// inError is true while the lines continue an error block.
	inError bool
}

// add reads one line of the installer's output.
func (c *causeLines) add(line string) {
	trimmed := strings.TrimSpace(line)
	if trimmed == "" {
		c.inError = false
		return
	}
	c.tail = keepLast(c.tail, trimmed, maxTailLines)
	switch {
	case startsError(trimmed):
		c.inError = true
	case c.inError && (line[0] == ' ' || line[0] == '\t'):
		// an indented continuation of the error (uv's "  Caused by: …")
	default:
		c.inError = false
		return
	}
	c.errors = keepLast(c.errors, trimmed, maxCauseLines)
}

// startsError recognises the first line of an installer's error.
func startsError(l string) bool {
	for _, p := range []string{"ERROR:", "error:", "×", "Caused by:"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// lines is what to quote: the error lines, else the last lines.
func (c *causeLines) lines() []string {
	if len(c.errors) > 0 {
		return append([]string(nil), c.errors...)
	}
	return append([]string(nil), c.tail...)
}

func keepLast(s []string, v string, n int) []string {
	s = append(s, v)
	if len(s) > n {
		s = append(s[:0], s[len(s)-n:]...)
	}
	return s
}
