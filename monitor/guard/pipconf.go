package guard

import (
	"net/url"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// ConstraintsName is the constraints file the guard writes at an
// environment's top.
const ConstraintsName = "gpucanary-constraints.txt"

// PipConfigPath is the pip config file pip reads from the environment at
// env: its "site" config, sys.prefix/pip.conf, or pip.ini on Windows
// (pip's configuration.py). sys.prefix is the venv for a venv, the conda
// env for a conda env, and the interpreter's own folder for a prefix such
// as an embedded Python (ComfyUI's python_embeded), so one route serves
// all three. The layout, not the host, decides: a Windows venv read from
// Linux is still written pip.ini.
func PipConfigPath(env string, layout pyenv.Layout) string {
	name := "pip.conf"
	if layout == pyenv.LayoutWindows {
		name = "pip.ini"
	}
	return join(layout, env, name)
}

// join joins by the layout's separator, so that a Windows path built on
// Linux (tests, a Windows venv on a shared drive) keeps its backslashes.
func join(layout pyenv.Layout, dir, name string) string {
	if layout == pyenv.LayoutWindows && strings.Contains(dir, `\`) {
		return strings.TrimRight(dir, `\`) + `\` + name
	}
	return filepath.Join(dir, name)
}

// ConstraintRef is how the pip config names the constraints file at path.
// pip splits a config's constraint value on whitespace (it is a list
// option), and a line break would end the value and start a setting, so
// a path with a space or a control character in it is written as a file:
// URL (each such character percent-encoded), which
// pip opens as a file with its %20 undone; other paths are written as
// they are, for the reader.
func ConstraintRef(path string) string {
	if !strings.ContainsFunc(path, func(r rune) bool { return unicode.IsSpace(r) || unsafeRune(r) }) {
		return path
	}
	p := filepath.ToSlash(strings.ReplaceAll(path, `\`, "/"))
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/x → /C:/x: file:///C:/x
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// pipEdits writes the constraints file and names it in the environment's
// pip config.
func (k Keeper) pipEdits(e *pyenv.Env, pins []string) []edit {
	cons := join(e.Layout, e.Path, ConstraintsName)
	conf := PipConfigPath(e.Path, e.Layout)
	nl := "\n"
	if e.Layout == pyenv.LayoutWindows {
		nl = "\r\n"
	}
	return []edit{
		{path: cons, root: e.Path, says: "wrote " + cons + " (" + strings.Join(pins, ", ") + ")",
			make: func([]byte) ([]byte, error) {
				return []byte(comment(header(e.Path), nl) + strings.Join(pins, nl) + nl), nil
			}},
		{path: conf, root: e.Path, says: "named it in " + conf,
			make: func(old []byte) ([]byte, error) {
				return addConstraint(old, ConstraintRef(cons), header(e.Path), nl), nil
			}},
	}
}

// addConstraint adds ref to pip's constraint option in the INI text old,
// changing nothing else: only lines are inserted. The value pip uses for
// `pip install` is [install]'s, else [global]'s; ref joins whichever
// already lists constraints (as a continuation line, which pip splits
// with the rest), else a new constraint key under [install] (a new
// section at the end when there is none). cmt, the comment, goes on lines
// of its own before the key: at a line's end it would be part of the
// value.
func addConstraint(old []byte, ref string, cmt []string, defaultNL string) []byte {
	text := string(old)
	nl := defaultNL
	if strings.Contains(text, "\r\n") {
		nl = "\r\n"
	} else if text != "" {
		nl = "\n"
	}
	c := comment(cmt, nl)
	lines := splitKeep(text)
	ini := scanINI(lines)
	insert := func(at int, s string) []byte { // s goes before line at
		var b strings.Builder
		for i, l := range lines {
			if i == at {
				b.WriteString(s)
			}
			b.WriteString(l)
		}
		if at >= len(lines) {
			b.WriteString(s)
		}
		return []byte(b.String())
	}
	for _, sect := range []string{"install", "global"} {
		if k, ok := ini.key[sect+".constraint"]; ok {
			lines[k.end] = ensureNL(lines[k.end], nl) + strings.Repeat(" ", k.indent+4) + ref + nl
			return insert(k.start, c)
		}
	}
	if s, ok := ini.section["install"]; ok {
		return insert(s+1, c+"constraint = "+ref+nl)
	}
	prefix := ""
	if len(lines) > 0 {
		last := len(lines) - 1
		lines[last] = ensureNL(lines[last], nl)
		prefix = nl
	}
	return insert(len(lines), prefix+"[install]"+nl+c+"constraint = "+ref+nl)
}

func ensureNL(l, nl string) string {
	if strings.HasSuffix(l, "\n") {
		return l
	}
	return l + nl
}

// splitKeep splits text into lines that keep their line ends.
func splitKeep(text string) []string {
	if text == "" {
		return nil
	}
	ls := strings.SplitAfter(text, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// iniKey is where one key's value lies: its key line, its last
// continuation line, and the key line's indent.
type iniKey struct{ start, end, indent int }

// iniScan is the layout of an INI file as Python's configparser (which
// pip uses) reads it: the first line of each section, and each key's
// lines by "section.key" (keys lowercased, as configparser does).
type iniScan struct {
	section map[string]int
	key     map[string]iniKey
}

// scanINI follows configparser's rules: comment lines (# or ;) and empty
// lines are skipped, a line indented deeper than its key continues the
// value, a "[name]" line opens a section, "key = value" or "key: value"
// sets a key.
func scanINI(lines []string) iniScan {
	s := iniScan{section: map[string]int{}, key: map[string]iniKey{}}
	sect, key, keyIndent := "", "", 0
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " \t"))
		if key != "" && indent > keyIndent {
			k := s.key[key]
			k.end = i
			s.key[key] = k
			continue
		}
		key = ""
		if strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") {
			sect = t[1 : len(t)-1]
			if _, ok := s.section[sect]; !ok {
				s.section[sect] = i
			}
			continue
		}
		if j := strings.IndexAny(t, "=:"); j > 0 && sect != "" {
			key, keyIndent = sect+"."+strings.ToLower(strings.TrimSpace(t[:j])), indent
			s.key[key] = iniKey{start: i, end: i, indent: indent}
		}
	}
	return s
}
