package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Marked finds the guard GPU Canary wrote into env's files, whatever its
// record says: the files that hold a part marked as the guard's. Unguard
// without a record uses it to say that `unguard --force` would lift what
// is there, rather than "nothing to lift" over a guard that holds.
func (k Keeper) Marked(env string) []string {
	env = absPath(env)
	var out []string
	files := guardFiles(env)
	for _, path := range sortedKeys(files) {
		b, _, err := readFile(files[path], path, maxFile)
		if err == nil && strings.Contains(string(b), "# "+marker) {
			out = append(out, path)
		}
	}
	return out
}

// Clear lifts the guard on env without its record, for a record that is
// missing, damaged or refused (RecordError): the constraints file the
// guard wrote is removed, and from the pip config, conda-meta/pinned and
// pyproject.toml the guard's marked part is taken out (its comment and
// what follows it: the constraint line, the pinned specs, the
// constraint-dependencies key), leaving the rest of each file as it is;
// a file left empty is removed. A uv project's index pin is left (it is
// also what `gpucanary fix --pin-index` writes) and said so. The record,
// when its folder is the user's own, is removed. It is the user's
// explicit way out (`unguard --force`), so it acts on the marks alone.
func (k Keeper) Clear(env string) (Result, error) {
	env = absPath(env)
	res := Result{Env: env}
	files := guardFiles(env)
	for _, path := range sortedKeys(files) {
		root := files[path]
		b, info, err := readFile(root, path, maxFile)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return res, fmt.Errorf("lifting the guard on %s: %w", escape(env), err)
		}
		text := string(b)
		if !strings.Contains(text, "# "+marker) {
			continue
		}
		var out string
		switch filepath.Base(path) {
		case ConstraintsName:
			if !strings.HasPrefix(text, "# "+marker) {
				res.Lines = append(res.Lines, "left "+escape(path)+": GPU Canary's comment is not at its top, so it is not only the guard's")
				continue
			}
		case "pip.conf", "pip.ini":
			out = stripPipGuard(text)
		case "pinned":
			out = stripBlock(text, func(l string) bool {
				f := strings.Fields(l)
				return len(f) >= 2 && slices.Contains([]string{"pytorch", "torch", "torchvision", "torchaudio"}, f[0]) && strings.HasPrefix(f[1], "==")
			}, false)
		case "pyproject.toml":
			out = stripBlock(text, nil, true)
		}
		if strings.TrimSpace(out) == "" {
			if err := removeFile(root, path); err != nil {
				return res, fmt.Errorf("lifting the guard on %s: %w", escape(env), err)
			}
			res.Lines = append(res.Lines, "removed "+escape(path))
			continue
		}
		if err := writeFile(root, path, []byte(out), info.mode); err != nil {
			return res, fmt.Errorf("lifting the guard on %s: %w", escape(env), err)
		}
		line := "took the guard's part out of " + escape(path)
		if filepath.Base(path) == "pyproject.toml" {
			line += " (the CUDA index pin in [tool.uv.sources] is left: gpucanary fix --pin-index writes it too)"
		}
		res.Lines = append(res.Lines, line)
	}
	if len(res.Lines) == 0 {
		return res, fmt.Errorf("%s: %w: none of its files holds a guard GPU Canary wrote", escape(env), ErrNotGuarded)
	}
	res.Lines = append(res.Lines, k.dropRecord(env))
	return res, nil
}

// dropRecord removes what is left of env's record, when its folder is
// the user's own; a record in a folder another user can write is not
// touched (removing by its names would be following it).
func (k Keeper) dropRecord(env string) string {
	if k.StateDir == "" {
		return "no guard record to remove (no state folder)"
	}
	dir := k.recordDir(env)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return "there was no guard record to remove"
	}
	if err := k.trustDirs(env, dir); err != nil {
		return "left the guard record " + dir + " as it is: " + err.Error()
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "could not remove the guard record " + dir + ": " + err.Error()
	}
	for _, e := range ents {
		if err := removeFile(dir, filepath.Join(dir, e.Name())); err != nil {
			return "could not remove the guard record " + dir + ": " + err.Error()
		}
	}
	if err := os.Remove(dir); err != nil {
		return "could not remove the guard record " + dir + ": " + err.Error()
	}
	return "removed the guard record " + dir
}

// stripPipGuard takes the guard's part out of a pip config: its comment
// (the marker line and the two after it), the constraint value naming
// gpucanary-constraints.txt (a key of its own, or a continuation line of
// the user's key), and an [install] section left with nothing in it.
func stripPipGuard(text string) string {
	lines := dropComment(splitKeep(text))
	ours := func(v string) bool {
		v = strings.TrimSpace(v)
		return strings.HasSuffix(v, "/"+ConstraintsName) || strings.HasSuffix(v, `\`+ConstraintsName)
	}
	var kept []string
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if k, v, ok := strings.Cut(t, "="); ok && strings.TrimSpace(strings.ToLower(k)) == "constraint" && ours(v) &&
			(i+1 == len(lines) || !isContinuation(lines[i+1], lines[i])) {
			continue
		}
		if ours(t) && indent(lines[i]) > 0 && isContinuationOfAny(lines[:i], lines[i]) {
			continue
		}
		kept = append(kept, lines[i])
	}
	return dropEmptySection(kept, "install")
}

// isContinuation is true when l is indented deeper than key, as
// configparser takes a continuation line.
func isContinuation(l, key string) bool {
	if strings.TrimSpace(l) == "" {
		return false
	}
	return indent(l) > indent(key)
}

// isContinuationOfAny is true when l continues the key line above it.
func isContinuationOfAny(above []string, l string) bool {
	for i := len(above) - 1; i >= 0; i-- {
		t := strings.TrimSpace(above[i])
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		if indent(above[i]) < indent(l) && strings.ContainsAny(t, "=:") {
			return true
		}
		if indent(above[i]) < indent(l) {
			return false
		}
	}
	return false
}

func indent(l string) int { return len(l) - len(strings.TrimLeft(l, " \t")) }

// dropEmptySection removes a [name] section that holds no key, and one
// empty line before it.
func dropEmptySection(lines []string, name string) string {
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "["+name+"]" {
			continue
		}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[j]), "[") {
			continue
		}
		from := i
		if from > 0 && strings.TrimSpace(lines[from-1]) == "" {
			from--
		}
		lines = append(lines[:from], lines[j:]...)
		break
	}
	return strings.Join(lines, "")
}

// dropComment removes each three-line comment the guard wrote.
func dropComment(lines []string) []string {
	var out []string
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(strings.TrimSpace(lines[i]), "# "+marker) {
			i += 2
			continue
		}
		out = append(out, lines[i])
	}
	return out
}

// stripBlock takes out the guard's comment and what it wrote after it:
// the lines that spec accepts (pinned), or the key up to its closing
// bracket (array: pyproject.toml's constraint-dependencies).
func stripBlock(text string, spec func(string) bool, array bool) string {
	lines := splitKeep(text)
	var out []string
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(strings.TrimSpace(lines[i]), "# "+marker) {
			out = append(out, lines[i])
			continue
		}
		j := i + 3
		switch {
		case array && j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j]), "constraint-dependencies"):
			for j < len(lines) && strings.TrimSpace(lines[j]) != "]" {
				j++
			}
			j++
		case spec != nil:
			for j < len(lines) && spec(strings.TrimSpace(lines[j])) {
				j++
			}
		}
		i = j - 1
	}
	return strings.Join(out, "")
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
