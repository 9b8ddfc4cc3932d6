package uvproject

import "strings"

// tri is a three-valued truth: a marker that tests something other than
// the platform (python_version, an extra) may or may not hold.
type tri int8

const (
	no tri = iota
	maybe
	yes
)

// platformEnv holds the PEP 508 marker variables that a platform fixes.
// Source: PEP 508 "Environment Markers" (sys.platform, platform.system(),
// os.name). platform_machine is left open: CUDA torch runs on x86_64 and
// aarch64 alike.
var platformEnv = map[string]map[string]string{
	"linux":   {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"},
	"windows": {"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt"},
}

// markerOn tells whether a PEP 508 marker can hold on platform ("linux"
// or "windows"). An empty marker holds everywhere; one that cannot be
// parsed may hold (the check errs towards warning).
func markerOn(marker, platform string) tri {
	if strings.TrimSpace(marker) == "" {
		return yes
	}
	p := markerParser{toks: tokenize(marker), env: platformEnv[platform]}
	v, ok := p.or()
	if !ok || p.i != len(p.toks) {
		return maybe
	}
	return v
}

type markerParser struct {
	toks []string
	i    int
	env  map[string]string
}

func (p *markerParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *markerParser) next() string {
	t := p.peek()
	p.i++
	return t
}

func (p *markerParser) or() (tri, bool) {
	v, ok := p.and()
	for ok && p.peek() == "or" {
		p.next()
		var w tri
		w, ok = p.and()
		v = max(v, w)
	}
	return v, ok
}

func (p *markerParser) and() (tri, bool) {
	v, ok := p.atom()
	for ok && p.peek() == "and" {
		p.next()
		var w tri
		w, ok = p.atom()
		v = min(v, w)
	}
	return v, ok
}

func (p *markerParser) atom() (tri, bool) {
	if p.peek() == "(" {
		p.next()
		v, ok := p.or()
		if !ok || p.next() != ")" {
			return maybe, false
		}
		return v, true
	}
	left := p.next()
	op := p.next()
	if op == "not" {
		if p.next() != "in" {
			return maybe, false
		}
		op = "not in"
	}
	right := p.next()
	if left == "" || right == "" || !isOp(op) {
		return maybe, false
	}
	l, lok := p.value(left)
	r, rok := p.value(right)
	if !lok || !rok {
		return maybe, true
	}
	switch op {
	case "==", "===":
		return truth(l == r), true
	case "!=":
		return truth(l != r), true
	case "in":
		return truth(strings.Contains(r, l)), true
	case "not in":
		return truth(!strings.Contains(r, l)), true
	}
	return maybe, true // version comparisons on platform names: not worth guessing
}

// value is a quoted literal, or a variable the platform fixes; ok is
// false for a variable it leaves open.
func (p *markerParser) value(tok string) (string, bool) {
	if len(tok) >= 2 && (tok[0] == '\'' || tok[0] == '"') && tok[len(tok)-1] == tok[0] {
		return tok[1 : len(tok)-1], true
	}
	v, ok := p.env[tok]
	return v, ok
}

func isOp(op string) bool {
	switch op {
	case "==", "!=", "<", "<=", ">", ">=", "~=", "===", "in", "not in":
		return true
	}
	return false
}

func truth(b bool) tri {
	if b {
		return yes
	}
	return no
}

// tokenize splits a marker into quoted strings, operators, parentheses
// and words.
func tokenize(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')':
			toks = append(toks, string(c))
			i++
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return append(toks, s[i:]) // unterminated: the parser rejects it
			}
			toks = append(toks, s[i:i+j+2])
			i += j + 2
		case strings.IndexByte("=!<>~", c) >= 0:
			j := i
			for j < len(s) && strings.IndexByte("=!<>~", s[j]) >= 0 {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		default:
			j := i
			for j < len(s) && strings.IndexByte(" \t\r\n()'\"=!<>~", s[j]) < 0 {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks
}
