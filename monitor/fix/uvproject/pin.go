package uvproject

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/gpucanary/gpucanary/monitor/config"
)

// Marker limits the pin to the platforms with CUDA wheels.
const Marker = "sys_platform == 'linux' or sys_platform == 'win32'"

// ErrConflict is returned when pyproject.toml already sends a package
// elsewhere; GPU Canary does not overwrite a choice the user made.
var ErrConflict = errors.New("pyproject.toml already pins it elsewhere")

// ErrUnsupportedLayout is returned for [tool.uv.sources] written inline or
// with dotted keys, which a line edit cannot extend safely.
var ErrUnsupportedLayout = errors.New("[tool.uv.sources] is written inline or with dotted keys")

var (
	sourcesHeader = regexp.MustCompile(`^\s*\[\s*tool\s*\.\s*uv\s*\.\s*sources\s*\]\s*(#.*)?$`)
	anyHeader     = regexp.MustCompile(`^\s*\[`)
)

// IndexName is the name of the pinned index for a variant tag.
func IndexName(tag string) string { return "pytorch-" + tag }

// PinText adds the CUDA index and the sources for packages to a
// pyproject.toml's text. Every byte outside the inserted lines is kept.
// It reports whether anything changed; a second call changes nothing.
func PinText(src []byte, indexBase, tag string, packages []string) ([]byte, bool, error) {
	text := string(src)
	bom := ""
	if strings.HasPrefix(text, "\ufeff") {
		bom, text = "\ufeff", text[len("\ufeff"):]
	}
	var doc pyprojectFile
	if err := toml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, false, fmt.Errorf("reading pyproject.toml: %w", err)
	}
	nl := "\n"
	if strings.Contains(text, "\r\n") {
		nl = "\r\n"
	}
	name := IndexName(tag)
	url := strings.TrimRight(indexBase, "/") + "/" + tag

	addIndex := true
	for _, ix := range doc.Tool.UV.Index {
		if ix.Name != name {
			continue
		}
		if strings.TrimRight(ix.URL, "/") != url {
			return nil, false, fmt.Errorf("index %q points at %s, not %s: %w", name, ix.URL, url, ErrConflict)
		}
		addIndex = false
	}
	var missing []string
	for _, pkg := range packages {
		cur, ok := doc.Tool.UV.Sources[pkg]
		if !ok {
			missing = append(missing, pkg)
			continue
		}
		if got := sourceIndex(cur); got != name {
			return nil, false, fmt.Errorf("%s is sent to %q in [tool.uv.sources]: %w; change it to index %q by hand if that is what you want", pkg, got, ErrConflict, name)
		}
	}
	if !addIndex && len(missing) == 0 {
		return src, false, nil
	}

	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	header := -1
	for i, l := range lines {
		if sourcesHeader.MatchString(strings.TrimRight(l, "\r\n")) {
			header = i
		}
	}
	if doc.Tool.UV.Sources != nil && header < 0 {
		return nil, false, fmt.Errorf("cannot add to it safely: %w; add the sources for %s by hand", ErrUnsupportedLayout, strings.Join(missing, ", "))
	}
	entries := make([]string, len(missing))
	for i, pkg := range missing {
		entries[i] = fmt.Sprintf(`%s = [{ index = "%s", marker = "%s" }]`, pkg, name, Marker) + nl
	}
	if header >= 0 && len(missing) > 0 {
		// After the last key of the table: before any blank lines and
		// comments that lead into the next table.
		end := header
		for i := header + 1; i < len(lines); i++ {
			l := strings.TrimSpace(lines[i])
			if anyHeader.MatchString(lines[i]) && !strings.HasPrefix(l, "[{") {
				break
			}
			if l != "" && !strings.HasPrefix(l, "#") {
				end = i
			}
		}
		if !strings.HasSuffix(lines[end], "\n") {
			lines[end] += nl
		}
		lines = append(lines[:end+1], append(entries, lines[end+1:]...)...)
	}
	var tail []string
	if addIndex {
		tail = append(tail, nl, "[[tool.uv.index]]"+nl, fmt.Sprintf(`name = "%s"`, name)+nl,
			fmt.Sprintf(`url = "%s"`, url)+nl, "explicit = true"+nl)
	}
	if header < 0 && len(missing) > 0 {
		tail = append(tail, nl, "[tool.uv.sources]"+nl)
		tail = append(tail, entries...)
	}
	if len(tail) > 0 {
		if n := len(lines); n > 0 && !strings.HasSuffix(lines[n-1], "\n") {
			lines[n-1] += nl
		}
		lines = append(lines, tail...)
	}
	out := bom + strings.Join(lines, "")

	// Prove the result: valid TOML that sends every package to the index.
	var check pyprojectFile
	if err := toml.Unmarshal([]byte(strings.TrimPrefix(out, "\ufeff")), &check); err != nil {
		return nil, false, fmt.Errorf("the edited pyproject.toml would not be valid TOML (%v); nothing was changed", err)
	}
	for _, pkg := range packages {
		if sourceIndex(check.Tool.UV.Sources[pkg]) != name {
			return nil, false, fmt.Errorf("the edit did not pin %s; nothing was changed", pkg)
		}
	}
	return []byte(out), true, nil
}

// PinResult says what PinIndex did.
type PinResult struct {
	Changed bool   `json:"changed"`
	Backup  string `json:"backup,omitempty"`
	Message string `json:"message"`
}

// PinIndex edits the pyproject.toml at path (a backup beside it first,
// then an atomic replace with the same permissions).
func PinIndex(path, indexBase, tag string, packages []string) (PinResult, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return PinResult{}, fmt.Errorf("reading %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return PinResult{}, fmt.Errorf("reading %s: %w", path, err)
	}
	out, changed, err := PinText(src, indexBase, tag, packages)
	if err != nil {
		return PinResult{}, fmt.Errorf("pinning the CUDA index in %s: %w", path, err)
	}
	list := strings.Join(packages, ", ")
	if !changed {
		return PinResult{Message: fmt.Sprintf("%s already pins %s to %s; nothing changed", path, list, IndexName(tag))}, nil
	}
	backup := fmt.Sprintf("%s.gpucanary-bak-%s", path, time.Now().UTC().Format("20060102T150405Z"))
	for i := 1; fileExists(backup); i++ {
		backup = fmt.Sprintf("%s.gpucanary-bak-%s-%d", path, time.Now().UTC().Format("20060102T150405Z"), i)
	}
	if err := os.WriteFile(backup, src, fi.Mode().Perm()); err != nil {
		return PinResult{}, fmt.Errorf("backing up %s: %w", path, err)
	}
	if err := config.WriteAtomic(path, out, fi.Mode().Perm()); err != nil {
		return PinResult{}, err
	}
	url := strings.TrimRight(indexBase, "/") + "/" + tag
	return PinResult{Changed: true, Backup: backup,
		Message: fmt.Sprintf("pinned %s to %s in %s (backup: %s); now run `uv lock` so uv.lock follows", list, url, path, backup)}, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
