package guard

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/uvproject"
)

// DefaultIndexBase is the PyTorch index a uv project is pinned to when
// Keeper.IndexBase is empty.
const DefaultIndexBase = "https://download.pytorch.org/whl"

// uvEdits keeps a uv project's torch: the project's pyproject.toml pins
// torch and its companions to the CUDA index they came from
// ([tool.uv.sources], as `gpucanary fix --pin-index` writes it), and
// constrains them to the installed versions with [tool.uv]
// constraint-dependencies, which uv lock, uv sync and uv run read from
// the workspace root's pyproject.toml (uv's settings reference). uv takes
// no constraint from inside the environment, so this is the whole route.
func (k Keeper) uvEdits(e *pyenv.Env, pyproject string) ([]edit, []string, error) {
	t := e.Torch()
	tag := ""
	if _, local, ok := strings.Cut(t.Version, "+"); ok && strings.HasPrefix(local, "cu") {
		tag = local
	} else if t.CUDA != "" {
		tag = "cu" + strings.ReplaceAll(t.CUDA, ".", "")
	}
	if tag == "" {
		return nil, nil, &Refused{Env: e.Path, Reason: "its torch names no CUDA variant to pin the project's index to"}
	}
	var pkgs, cons []string
	for _, n := range guarded {
		p := e.Packages[n]
		if p == nil {
			continue
		}
		v := p.DistVersion
		if v == "" {
			v = p.Version
		}
		pkgs = append(pkgs, n)
		cons = append(cons, n+"=="+v+"; "+uvproject.Marker)
	}
	base := k.IndexBase
	if base == "" {
		base = DefaultIndexBase
	}
	return []edit{{path: pyproject, root: filepath.Dir(pyproject), says: fmt.Sprintf("pinned %s to %s and constrained %s in %s",
		strings.Join(pkgs, ", "), uvproject.IndexURL(base, tag), strings.Join(cons, ", "), pyproject),
		make: func(old []byte) ([]byte, error) {
			pinned, _, err := uvproject.PinText(old, base, tag, pkgs)
			if err != nil {
				return nil, fmt.Errorf("pinning the CUDA index in %s: %w", pyproject, err)
			}
			out, err := addConstraintDeps(pinned, cons, header(e.Path))
			if err != nil {
				return nil, fmt.Errorf("adding constraint-dependencies to %s: %w", pyproject, err)
			}
			return out, nil
		}}}, cons, nil
}

// addConstraintDeps inserts a [tool.uv] constraint-dependencies key into
// the pyproject text src, under its [tool.uv] table or in a new one at
// the end, and proves by parsing the result back that nothing else
// changed. One the project already has is left to the user: a line edit
// cannot merge into a list that may span lines.
func addConstraintDeps(src []byte, cons, cmt []string) ([]byte, error) {
	var before map[string]any
	if err := toml.Unmarshal(src, &before); err != nil {
		return nil, err
	}
	if uv, _ := table(table(before, "tool"), "uv").(map[string]any); uv != nil {
		if _, ok := uv["constraint-dependencies"]; ok {
			return nil, errors.New("it already has [tool.uv] constraint-dependencies; add " + strings.Join(cons, ", ") + " to it by hand")
		}
	}
	text := string(src)
	nl := "\n"
	if strings.Contains(text, "\r\n") {
		nl = "\r\n"
	}
	quoted := make([]string, len(cons))
	for i, c := range cons {
		quoted[i] = "    \"" + c + "\"," + nl
	}
	key := comment(cmt, nl) + "constraint-dependencies = [" + nl + strings.Join(quoted, "") + "]" + nl
	lines := splitKeep(text)
	var b strings.Builder
	done := false
	for _, l := range lines {
		b.WriteString(l)
		if !done && isUVHeader(l) {
			if !strings.HasSuffix(l, "\n") {
				b.WriteString(nl)
			}
			b.WriteString(key)
			done = true
		}
	}
	if !done {
		if text != "" {
			if !strings.HasSuffix(text, "\n") {
				b.WriteString(nl)
			}
			b.WriteString(nl)
		}
		b.WriteString("[tool.uv]" + nl + key)
	}
	out := []byte(b.String())
	var after map[string]any
	if err := toml.Unmarshal(out, &after); err != nil {
		return nil, fmt.Errorf("the edited file does not parse (%v); tool.uv is laid out in a way a line edit cannot extend", err)
	}
	uv, _ := table(table(after, "tool"), "uv").(map[string]any)
	got, _ := uv["constraint-dependencies"].([]any)
	if len(got) != len(cons) {
		return nil, errors.New("the edited file did not read back with the constraints")
	}
	delete(uv, "constraint-dependencies")
	if len(uv) == 0 {
		if tool, _ := table(after, "tool").(map[string]any); tool != nil {
			if _, had := table(table(before, "tool"), "uv").(map[string]any); !had {
				delete(tool, "uv")
				if len(tool) == 0 && table(before, "tool") == nil {
					delete(after, "tool")
				}
			}
		}
	}
	if !reflect.DeepEqual(before, after) {
		return nil, errors.New("the edited file read back with other changes; nothing was changed")
	}
	return out, nil
}

func table(v any, key string) any {
	m, _ := v.(map[string]any)
	if m == nil {
		return nil
	}
	return m[key]
}

// isUVHeader is true for a "[tool.uv]" table header line (spaces and a
// trailing comment allowed).
func isUVHeader(l string) bool {
	t := strings.TrimSpace(l)
	if i := strings.IndexByte(t, '#'); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	if !strings.HasPrefix(t, "[") || strings.HasPrefix(t, "[[") || !strings.HasSuffix(t, "]") {
		return false
	}
	parts := strings.Split(t[1:len(t)-1], ".")
	return len(parts) == 2 && strings.TrimSpace(parts[0]) == "tool" && strings.TrimSpace(parts[1]) == "uv"
}
