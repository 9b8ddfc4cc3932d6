package sitepath

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// GPU Canary never runs a .pth file's import lines, but Python does,
// while site.addsitedir reads the file, and some of them move folders to
// the front of sys.path, where a torch they hold is imported before the
// environment's own. The few forms tools write are read statically:
//
//	import sys; sys.path.insert(0, '/opt/cpu_site')     a folder at a position
//	import sys; sys.path.append('/opt/shared')           a folder at the end
//
// and setuptools' easy_install block (setuptools' command/easy_install.py,
// PthDistributions), whose first and last lines put the egg folders its
// path lines add at the front of sys.path, each file's after the last's
// (sys.__egginsert):
//
//	import sys; sys.__plen = len(sys.path)
//	./torch-2.5.1-py3.11-linux-x86_64.egg
//	import sys; new = sys.path[sys.__plen:]; del sys.path[sys.__plen:]; p = getattr(sys, '__egginsert', 0); sys.path[p:p] = new; sys.__egginsert = p + len(new)
//
// Any other statement that touches sys.path (or calls site.addsitedir) is
// code GPU Canary cannot follow, and is said (pyenv's Env.PathCode); one that
// does not (import _virtualenv, distutils-precedence.pth's shim,
// setuptools' namespace-package lines) changes nothing GPU Canary reads.

// OpKind is what one followed statement does to sys.path.
type OpKind int

const (
	OpInsert  OpKind = iota // sys.path.insert(pos, dir)
	OpAppend                // sys.path.append(dir)
	OpEggMark               // sys.__plen = len(sys.path)
	OpEggMove               // the block's last line: sys.path[plen:] moved to sys.__egginsert
)

type Op struct {
	Kind OpKind
	Pos  int    // OpInsert's position
	Dir  string // the folder OpInsert and OpAppend put on sys.path
}

// Effect is what an import line does to sys.path as far as GPU Canary
// can tell: ops it follows, or pathCode when a statement it cannot
// follow touches sys.path (then ops is empty: where that statement
// leaves the folders is not known).
type Effect struct {
	Ops      []Op
	PathCode bool
}

// eggTail is the easy_install block's last line, its statements with
// white space outside string literals removed and quotes as '.
var eggTail = []string{"new=sys.path[sys.__plen:]", "delsys.path[sys.__plen:]", "p=getattr(sys,'__egginsert',0)", "sys.path[p:p]=new", "sys.__egginsert=p+len(new)"}

const eggMark = "sys.__plen=len(sys.path)"

// importStmt matches a plain import statement (import sys, os as o).
//
// Compiled at first use, not at each start of the program (a check's
// start does not pay for it).
var importStmt = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^import\s+[A-Za-z_][\w.]*(\s+as\s+\w+)?(\s*,\s*[A-Za-z_][\w.]*(\s+as\s+\w+)?)*$`)
})

// pathWords are what a statement that changes the import path says: a
// statement with none of them is taken to leave sys.path alone.
var pathWords = []string{"sys.path", "addsitedir", "path.insert", "path.append", "path.extend", "__egginsert"}

// ReadCode reads an import line of a .pth file (Line.Code).
func ReadCode(code string) Effect {
	stmts, ok := pyStatements(code)
	if !ok {
		return Effect{PathCode: touchesPath(code)}
	}
	var rest []string
	for _, s := range stmts {
		if !importStmt().MatchString(s) {
			rest = append(rest, s)
		}
	}
	canon := make([]string, len(rest))
	for i, s := range rest {
		canon[i] = canonical(s)
	}
	if strings.Join(canon, ";") == strings.Join(eggTail, ";") {
		return Effect{Ops: []Op{{Kind: OpEggMove}}}
	}
	var e Effect
	for i, s := range rest {
		if canon[i] == eggMark {
			e.Ops = append(e.Ops, Op{Kind: OpEggMark})
			continue
		}
		if op, ok := pathCall(s); ok {
			e.Ops = append(e.Ops, op)
			continue
		}
		if touchesPath(s) {
			return Effect{PathCode: true}
		}
	}
	return e
}

// dynamicCode matches a call that runs code built at run time (exec,
// eval, compile, as builtins or as attributes: builtins.exec): what it
// does to sys.path cannot be read from the line ("import sys;
// exec(base64.b64decode('…'))" that puts a CPU torch first), so such a
// line is taken as one that touches it.
//
// Compiled at first use, not at each start of the program (a check's
// start does not pay for it).
var dynamicCode = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(exec|eval|compile)\s*\(`) })

// touchesPath reports whether a statement may change sys.path: it names
// it (pathWords), or it runs code built at run time (dynamicCode).
func touchesPath(s string) bool {
	if dynamicCode().MatchString(s) {
		return true
	}
	for _, w := range pathWords {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// pathCall reads sys.path.insert(N, 'literal') and
// sys.path.append('literal') with an absolute literal; a relative one is
// relative to the folder Python starts in, which is not known.
func pathCall(s string) (Op, bool) {
	var op Op
	var args string
	if a, ok := cutCall(s, "sys.path.insert"); ok {
		n, lit, found := strings.Cut(a, ",")
		pos, err := strconv.Atoi(strings.TrimSpace(n))
		if !found || err != nil {
			return op, false
		}
		op, args = Op{Kind: OpInsert, Pos: pos}, lit
	} else if a, ok := cutCall(s, "sys.path.append"); ok {
		op, args = Op{Kind: OpAppend}, a
	} else {
		return op, false
	}
	dir, after, err := pyStringLiteral(strings.TrimSpace(args))
	if err != nil || strings.TrimSpace(after) != "" || !isAbsAny(dir) {
		return op, false
	}
	op.Dir = dir
	return op, true
}

// cutCall returns the argument text of fn(...) when s is exactly that call.
func cutCall(s, fn string) (string, bool) {
	rest, ok := strings.CutPrefix(s, fn)
	if !ok {
		return "", false
	}
	rest, ok = strings.CutPrefix(strings.TrimLeft(rest, " \t"), "(")
	if !ok || !strings.HasSuffix(rest, ")") {
		return "", false
	}
	return rest[:len(rest)-1], true
}

// isAbsAny reports whether p is absolute as POSIX or Windows writes it.
func isAbsAny(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\\`) ||
		len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

// pyStatements splits one line of Python at the semicolons outside
// string literals, each statement trimmed, empty ones and a trailing
// comment dropped; ok is false when a literal is not closed.
func pyStatements(code string) ([]string, bool) {
	var out []string
	start := 0
	var quote byte
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '\'' || c == '"':
			quote = c
		case c == '#':
			code = code[:i]
		case c == ';':
			out = append(out, code[start:i])
			start = i + 1
		}
	}
	if quote != 0 {
		return nil, false
	}
	out = append(out, code[start:])
	stmts := out[:0]
	for _, s := range out {
		if s = strings.TrimSpace(s); s != "" {
			stmts = append(stmts, s)
		}
	}
	return stmts, true
}

// canonical is a statement with the white space outside string literals
// removed and double quotes as single ones, to compare with a known form.
func canonical(s string) string {
	var b strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\' && i+1 < len(s):
			b.WriteByte(c)
			i++
			c = s[i]
		case quote != 0 && c == quote:
			quote = 0
			c = '\''
		case quote != 0:
		case c == '\'' || c == '"':
			quote = c
			c = '\''
		case c == ' ' || c == '\t':
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
