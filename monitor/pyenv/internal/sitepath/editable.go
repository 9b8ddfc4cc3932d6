package sitepath

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// GPU Canary never runs a .pth file's import lines. One of them is read
// statically because an editable torch is commonly installed by it:
// setuptools (64 and later, PEP 660) writes, for a layout a plain path
// cannot serve,
//
//	__editable__.torch-2.5.1.pth:   import __editable___torch_2_5_1_finder; __editable___torch_2_5_1_finder.install()
//	__editable___torch_2_5_1_finder.py, beside it:   MAPPING = {'torch': '/home/ana/pytorch/torch'}
//
// (MAPPING: dict[str, str] = {...} in later releases); install() appends
// the module's finder to sys.meta_path, which imports each MAPPING name
// from its folder when nothing on sys.path holds it. Source: setuptools'
// command/editable_wheel.py (_finder_template, _EditableFinder).

// EditableFinder recognizes setuptools' finder line, exactly
// "import M; M.install()" with M an __editable___*_finder module, and
// returns M.
func EditableFinder(code string) (string, bool) {
	rest := strings.TrimLeft(strings.TrimPrefix(code, "import"), " \t")
	mod, call, ok := strings.Cut(rest, ";")
	mod = strings.TrimSpace(mod)
	if !ok || !strings.HasPrefix(mod, "__editable___") || !strings.HasSuffix(mod, "_finder") || strings.ContainsFunc(mod, func(r rune) bool { return !identByte(byte(r)) || r > 0x7f }) {
		return "", false
	}
	return mod, strings.TrimSpace(call) == mod+".install()"
}

var errNoMapping = errors.New("no MAPPING = {...} line")

// FinderMapping reads the MAPPING line of a finder module: a dict of
// str to str as Python's repr writes it, in its order.
func FinderMapping(data []byte) ([][2]string, error) {
	for line := range strings.Lines(string(data)) {
		rest, ok := strings.CutPrefix(line, "MAPPING")
		if !ok || rest == "" || !strings.ContainsRune(" \t:=", rune(rest[0])) {
			continue
		}
		rest = strings.TrimLeft(rest, " \t")
		if strings.HasPrefix(rest, ":") { // an annotation: MAPPING: dict[str, str] = {...}
			rest = rest[strings.IndexByte(rest+"=", '='):]
		}
		if rest, ok = strings.CutPrefix(rest, "="); !ok || strings.HasPrefix(rest, "=") {
			continue
		}
		return parseStrDict(strings.TrimSpace(rest))
	}
	return nil, errNoMapping
}

// parseStrDict parses a dict display whose keys and values are string
// literals: {'torch': '/src/torch', "it's": 'x'}.
func parseStrDict(s string) ([][2]string, error) {
	bad := fmt.Errorf("MAPPING is not a dict of strings: %.60q", s)
	s, ok := strings.CutPrefix(s, "{")
	if !ok {
		return nil, bad
	}
	var out [][2]string
	for {
		s = strings.TrimLeft(s, " \t")
		if rest, ok := strings.CutPrefix(s, "}"); ok && strings.TrimSpace(rest) == "" {
			return out, nil
		}
		var kv [2]string
		var err error
		if kv[0], s, err = pyStringLiteral(s); err != nil {
			return nil, bad
		}
		if s, ok = strings.CutPrefix(strings.TrimLeft(s, " \t"), ":"); !ok {
			return nil, bad
		}
		if kv[1], s, err = pyStringLiteral(strings.TrimLeft(s, " \t")); err != nil {
			return nil, bad
		}
		out = append(out, kv)
		s = strings.TrimLeft(s, " \t")
		if rest, ok := strings.CutPrefix(s, ","); ok {
			s = rest
		} else if !strings.HasPrefix(s, "}") {
			return nil, bad
		}
	}
}

// pyStringLiteral reads a string literal as repr() writes one ('...' or
// "...", with \\, \', \", \n, \r, \t, \xNN, \uNNNN and \UNNNNNNNN
// escapes) and returns its value and what follows it. A lone surrogate
// \udcNN is the byte NN, as os.fsencode turns an undecodable byte of a
// path back.
func pyStringLiteral(s string) (string, string, error) {
	if s == "" || s[0] != '\'' && s[0] != '"' {
		return "", s, errors.New("not a string literal")
	}
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return b.String(), s[i+1:], nil
		case c == '\n':
			return "", s, errors.New("unterminated string literal")
		case c != '\\':
			b.WriteByte(c)
			continue
		}
		i++
		if i == len(s) {
			break
		}
		width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[i]]
		switch s[i] {
		case '\\', '\'', '"':
			b.WriteByte(s[i])
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'x', 'u', 'U':
			if i+width >= len(s) {
				return "", s, errors.New("short escape")
			}
			r, err := strconv.ParseUint(s[i+1:i+1+width], 16, 32)
			if err != nil {
				return "", s, fmt.Errorf("bad escape: %w", err)
			}
			if r >= 0xdc80 && r <= 0xdcff {
				b.WriteByte(byte(r - 0xdc00))
			} else {
				b.WriteRune(rune(r)) // \xNN too is a code point, not a byte
			}
			i += width
		default:
			return "", s, fmt.Errorf("unknown escape \\%c", s[i])
		}
	}
	return "", s, errors.New("unterminated string literal")
}

// identByte tells a byte of a Python identifier (ASCII).
func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
