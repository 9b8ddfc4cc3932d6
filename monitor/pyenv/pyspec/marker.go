// Package pyspec holds the Python packaging standards GPU Canary reads
// without Python, once for every part that reads them: PEP 508 environment
// markers (which of an installed torch's NVIDIA runtime requirements apply
// here; which platforms a uv.lock's torch is for) and PEP 440 specifiers.
package pyspec

import (
	"strings"

	pep440 "github.com/aquasecurity/go-pep440-version"
)

// Env holds the values of PEP 508's environment marker variables
// (python_version, platform_system, …) for one environment. A variable it
// does not hold is unknown: a comparison with it can be neither true nor
// false.
type Env map[string]string

// Eval evaluates a PEP 508 environment marker (the part of a
// requirement after ";") in env. known is false when the marker cannot be
// parsed or its value depends on a variable env does not know; applies is
// meaningful only when known is true. An empty marker always applies.
//
// It follows packaging's markers.py, which pip uses: and, or and
// parentheses; ==, !=, <, <=, >, >=, ~= and === compare as PEP 440
// versions when the right side is a valid version specifier, else as
// strings; in and not in test for a substring; either quote style. The
// logic is three-valued, so "platform_system == 'Linux' and X" is false on
// Windows whatever X is, and unknown on Linux when X is.
func Eval(marker string, env Env) (applies, known bool) {
	if strings.TrimSpace(marker) == "" {
		return true, true
	}
	p := &markerParser{toks: tokenizeMarker(marker), env: env}
	if p.toks == nil {
		return false, false
	}
	v := p.or()
	if p.bad || p.pos != len(p.toks) {
		return false, false
	}
	return v == triTrue, v != triUnknown
}

// tri is a three-valued truth: a comparison with an unknown variable is
// neither true nor false.
type tri int8

const (
	triUnknown tri = iota
	triFalse
	triTrue
)

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

// markerTok is one token: a quoted string, a name (a variable or a
// keyword), an operator or a parenthesis.
type markerTok struct {
	kind byte // 's' string, 'n' name, 'o' operator, '(' or ')'
	text string
}

// markerOps are the comparison operators, longest first.
var markerOps = []string{"===", "==", "!=", "<=", ">=", "~=", "<", ">"}

// tokenizeMarker splits a marker into tokens; nil when it holds something
// no marker can (an unterminated string, a stray character).
func tokenizeMarker(s string) []markerTok {
	toks := []markerTok{}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '(' || c == ')':
			toks = append(toks, markerTok{kind: c})
			i++
		case c == '\'' || c == '"':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return nil
			}
			toks = append(toks, markerTok{kind: 's', text: s[i+1 : i+1+end]})
			i += end + 2
		case isNameByte(c):
			j := i
			for j < len(s) && (isNameByte(s[j]) || s[j] == '.' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			toks = append(toks, markerTok{kind: 'n', text: s[i:j]})
			i = j
		default:
			op := ""
			for _, o := range markerOps {
				if strings.HasPrefix(s[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return nil
			}
			toks = append(toks, markerTok{kind: 'o', text: op})
			i += len(op)
		}
	}
	return toks
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// markerAliases are the legacy dotted names packaging still accepts.
var markerAliases = map[string]string{
	"os.name":                        "os_name",
	"sys.platform":                   "sys_platform",
	"platform.version":               "platform_version",
	"platform.machine":               "platform_machine",
	"platform.python_implementation": "platform_python_implementation",
	"python_implementation":          "platform_python_implementation",
}

// markerVars are PEP 508's variables: a name outside them is no marker.
var markerVars = map[string]bool{
	"python_version": true, "python_full_version": true, "os_name": true, "sys_platform": true,
	"platform_release": true, "platform_system": true, "platform_version": true, "platform_machine": true,
	"platform_python_implementation": true, "implementation_name": true, "implementation_version": true, "extra": true,
}

// markerParser is a recursive-descent parser that evaluates as it goes:
//
//	or   = and { "or" and }
//	and  = atom { "and" atom }
//	atom = "(" or ")" | value op value
type markerParser struct {
	toks []markerTok
	pos  int
	env  Env
	bad  bool
}

func (p *markerParser) peek() (markerTok, bool) {
	if p.pos >= len(p.toks) {
		return markerTok{}, false
	}
	return p.toks[p.pos], true
}

func (p *markerParser) keyword(word string) bool {
	t, ok := p.peek()
	if ok && t.kind == 'n' && t.text == word {
		p.pos++
		return true
	}
	return false
}

func (p *markerParser) or() tri {
	v := p.and()
	for !p.bad && p.keyword("or") {
		w := p.and()
		switch {
		case v == triTrue || w == triTrue:
			v = triTrue
		case v == triFalse && w == triFalse:
			v = triFalse
		default:
			v = triUnknown
		}
	}
	return v
}

func (p *markerParser) and() tri {
	v := p.atom()
	for !p.bad && p.keyword("and") {
		w := p.atom()
		switch {
		case v == triFalse || w == triFalse:
			v = triFalse
		case v == triTrue && w == triTrue:
			v = triTrue
		default:
			v = triUnknown
		}
	}
	return v
}

func (p *markerParser) atom() tri {
	t, ok := p.peek()
	if !ok {
		p.bad = true
		return triUnknown
	}
	if t.kind == '(' {
		p.pos++
		v := p.or()
		if t, ok := p.peek(); !ok || t.kind != ')' {
			p.bad = true
			return triUnknown
		}
		p.pos++
		return v
	}
	lhs := p.value()
	op := p.op()
	rhs := p.value()
	if p.bad {
		return triUnknown
	}
	return compareMarker(lhs, op, rhs, p.env)
}

// markerValue is one side of a comparison: a literal, or a variable.
type markerValue struct {
	text  string
	isVar bool
}

func (p *markerParser) value() markerValue {
	t, ok := p.peek()
	switch {
	case !ok:
		p.bad = true
	case t.kind == 's':
		p.pos++
		return markerValue{text: t.text}
	case t.kind == 'n':
		name := t.text
		if a, ok := markerAliases[name]; ok {
			name = a
		}
		if !markerVars[name] {
			p.bad = true
			break
		}
		p.pos++
		return markerValue{text: name, isVar: true}
	default:
		p.bad = true
	}
	return markerValue{}
}

func (p *markerParser) op() string {
	t, ok := p.peek()
	switch {
	case !ok:
	case t.kind == 'o':
		p.pos++
		return t.text
	case t.kind == 'n' && t.text == "in":
		p.pos++
		return "in"
	case t.kind == 'n' && t.text == "not":
		p.pos++
		if p.keyword("in") {
			return "not in"
		}
	}
	p.bad = true
	return ""
}

// compareMarker is one comparison, unknown when a side is a variable env
// does not hold.
func compareMarker(lhs markerValue, op string, rhs markerValue, env Env) tri {
	l, lok := resolveMarker(lhs, env)
	r, rok := resolveMarker(rhs, env)
	switch {
	case lok && rok:
		return compareValues(l, op, r)
	case !lok && lhs.text == "python_full_version" && rok:
		return fullVersionCompare(env, op, r, func(full string) tri { return compareValues(full, op, r) })
	case !rok && rhs.text == "python_full_version" && lok:
		return fullVersionCompare(env, op, l, func(full string) tri { return compareValues(l, op, full) })
	}
	return triUnknown
}

func resolveMarker(v markerValue, env Env) (string, bool) {
	if !v.isVar {
		return v.text, true
	}
	s, ok := env[v.text]
	return s, ok
}

// fullVersionCompare answers a comparison with python_full_version when
// env knows only python_version ("3.11"): every 3.11.x compares alike
// with a version of another major.minor ("3.13", "3.8.2"), so 3.11.0
// stands for them; against one of the same major.minor the patch decides,
// and the answer is unknown.
func fullVersionCompare(env Env, op, other string, cmp func(full string) tri) tri {
	py, ok := env["python_version"]
	if !ok || op == "in" || op == "not in" || op == "===" {
		return triUnknown
	}
	o, err := VersionOf(strings.TrimSuffix(strings.TrimSpace(other), ".*"))
	if err != nil {
		return triUnknown
	}
	rel := strings.SplitN(o.Public, ".", 3)
	if len(rel) < 2 || rel[0]+"."+rel[1] == py {
		return triUnknown
	}
	return cmp(py + ".0")
}

// compareValues compares two known values as packaging does: as a PEP 440
// version against a specifier when op and the right side make one, else
// as strings.
func compareValues(l, op, r string) tri {
	switch op {
	case "in":
		return triOf(strings.Contains(r, l))
	case "not in":
		return triOf(!strings.Contains(r, l))
	case "===":
		return triOf(strings.EqualFold(l, r))
	}
	if v, ok := versionCompare(l, op, r); ok {
		return v
	}
	switch op {
	case "==":
		return triOf(l == r)
	case "!=":
		return triOf(l != r)
	case "<":
		return triOf(l < r)
	case "<=":
		return triOf(l <= r)
	case ">":
		return triOf(l > r)
	case ">=":
		return triOf(l >= r)
	}
	return triUnknown // ~= on something that is no version: packaging refuses it
}

// versionCompare is l op r as PEP 440 versions; ok is false when op+r is no
// specifier (then the strings are compared). A specifier whose left side
// is no version is unknown (packaging raises, or answers false, by
// release).
func versionCompare(l, op, r string) (v tri, ok bool) {
	if strings.ContainsAny(r, ",|") || strings.TrimSpace(r) == "*" {
		return triUnknown, false // one specifier, not a set (pep440 would read a set)
	}
	spec, err := parseSpecifiers(op + r)
	if err != nil {
		return triUnknown, false
	}
	have, err := pep440.Parse(strings.TrimSpace(l))
	if err != nil {
		return triUnknown, true
	}
	return checkSpec(spec, have), true
}

// checkSpec is spec.Check, unknown if the library panics on an input its
// parser let through: a marker must never stop an inspection.
func checkSpec(spec pep440.Specifiers, v pep440.Version) (t tri) {
	defer func() {
		if recover() != nil {
			t = triUnknown
		}
	}()
	return triOf(spec.Check(v))
}
