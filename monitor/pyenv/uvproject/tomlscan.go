package uvproject

import "strings"

// tomlHeader is a table header line: [a.b] or [[a.b]].
type tomlHeader struct {
	line  int      // index into the lines the text was split into
	key   []string // the dotted key, quotes removed
	array bool     // [[...]]
}

// tomlLayout is where a TOML text's tables start and which lines carry
// keys or values (rather than blanks and comments). It is the map a line
// edit needs: a header-looking line inside a multi-line string or array
// is not a header.
type tomlLayout struct {
	headers []tomlHeader
	content []bool // per line: holds part of a key, a value or a header
}

// splitLines splits text after every "\n", keeping the line endings; a
// last line without one is kept as it is.
func splitLines(text string) []string {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// scanTOML maps text, split as splitLines splits it. It does not check
// the TOML: the caller parses it with go-toml first.
func scanTOML(text string) tomlLayout {
	lines := splitLines(text)
	lay := tomlLayout{content: make([]bool, len(lines))}
	depth := 0 // open [ and { inside a value
	inML := "" // the closing delimiter of an open multi-line string
	for n, line := range lines {
		i := 0
		if inML != "" {
			lay.content[n] = true
			end := closeML(line, inML)
			if end < 0 {
				continue
			}
			inML, i = "", end
		} else if depth == 0 {
			t := strings.TrimLeft(line, " \t")
			if strings.HasPrefix(t, "[") {
				lay.content[n] = true
				if h, ok := parseHeader(t); ok {
					h.line = n
					lay.headers = append(lay.headers, h)
				}
				continue
			}
		}
		for i < len(line) {
			c := line[i]
			switch {
			case c == '#':
				i = len(line)
			case c == ' ' || c == '\t' || c == '\r' || c == '\n':
				i++
			case c == '"' || c == '\'':
				lay.content[n] = true
				q := string(c)
				if strings.HasPrefix(line[i:], q+q+q) {
					end := closeML(line[i+3:], q+q+q)
					if end < 0 {
						inML, i = q+q+q, len(line)
						continue
					}
					i += 3 + end
					continue
				}
				i = closeString(line, i)
			default:
				lay.content[n] = true
				switch c {
				case '[', '{':
					depth++
				case ']', '}':
					if depth > 0 {
						depth--
					}
				}
				i++
			}
		}
	}
	return lay
}

// closeML returns the index just past the closing delim of a multi-line
// string in s (which starts inside the string), or -1. A basic string's
// backslash escapes the next byte; extra quotes before the delimiter are
// part of the string (TOML allows up to two).
func closeML(s, delim string) int {
	for i := 0; i < len(s); i++ {
		if delim == `"""` && s[i] == '\\' {
			i++
			continue
		}
		if strings.HasPrefix(s[i:], delim) {
			end := i + 3
			for end < len(s) && end < i+5 && s[end] == delim[0] {
				end++
			}
			return end
		}
	}
	return -1
}

// closeString returns the index just past the single-line string that
// opens at line[i].
func closeString(line string, i int) int {
	q := line[i]
	for j := i + 1; j < len(line); j++ {
		if q == '"' && line[j] == '\\' {
			j++
			continue
		}
		if line[j] == q {
			return j + 1
		}
	}
	return len(line)
}

// parseHeader reads "[a . "b" .c]  # note" or "[[a.b]]".
func parseHeader(t string) (tomlHeader, bool) {
	h := tomlHeader{}
	rest := t[1:]
	if strings.HasPrefix(rest, "[") {
		h.array, rest = true, rest[1:]
	}
	var part strings.Builder
	quoted := false
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case c == '"' || c == '\'':
			end := closeString(rest, i)
			inner := rest[i+1 : max(i+1, end-1)]
			if c == '"' {
				inner = strings.ReplaceAll(inner, `\"`, `"`)
			}
			part.WriteString(inner)
			quoted = true
			i = end - 1
		case c == '.' || c == ']':
			k := strings.TrimSpace(part.String())
			if k == "" && !quoted {
				return h, false
			}
			h.key = append(h.key, k)
			part.Reset()
			quoted = false
			if c == ']' {
				if h.array && !strings.HasPrefix(rest[i+1:], "]") {
					return h, false
				}
				return h, true
			}
		case c == ' ' || c == '\t':
		default:
			part.WriteByte(c)
		}
	}
	return h, false
}

// is reports whether the header's key is the dotted key want.
func (h tomlHeader) is(want ...string) bool {
	if len(h.key) != len(want) {
		return false
	}
	for i := range want {
		if h.key[i] != want[i] {
			return false
		}
	}
	return true
}
