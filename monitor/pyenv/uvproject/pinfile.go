package uvproject

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// PinResult says what PinIndex did, in words the CLI prints.
type PinResult struct {
	Changed bool   `json:"changed"`
	Backup  string `json:"backup,omitempty"` // "" when nothing changed
	Message string `json:"message"`          // lowercase, no final period
}

// now is the clock backup names are stamped with.
var now = time.Now

// PinIndex pins packages to the CUDA index indexBase/tag in the
// pyproject.toml at path, so that the next `uv lock` and `uv sync` keep a
// CUDA torch (see PinText). It copies the original to
// path.gpucanary-bak-<UTC time> first (never over an existing file), then
// replaces path atomically with the same permissions. A symlinked
// pyproject.toml is edited where it points.
func PinIndex(path, indexBase, tag string, packages []string) (PinResult, error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	src, err := safefs.ReadFile(path, maxProjectFile)
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
	url := IndexURL(indexBase, tag)
	if !changed {
		return PinResult{Message: fmt.Sprintf("%s already pinned to %s in %s; nothing changed", list, url, path)}, nil
	}
	backup, err := writeBackup(path, src, fi.Mode().Perm())
	if err != nil {
		return PinResult{}, err
	}
	if err := config.WriteAtomic(path, out, fi.Mode().Perm()); err != nil {
		return PinResult{}, fmt.Errorf("pinning the CUDA index in %s (the original is in %s): %w", path, backup, err)
	}
	return PinResult{Changed: true, Backup: backup,
		Message: fmt.Sprintf("pinned %s to %s in %s (backup: %s); now run `uv lock` so uv.lock follows", list, url, path, backup)}, nil
}

// writeBackup copies data to a new file beside path and returns its name.
func writeBackup(path string, data []byte, perm fs.FileMode) (string, error) {
	stamp := path + ".gpucanary-bak-" + now().UTC().Format("20060102T150405Z")
	name := stamp
	for i := 1; ; i++ {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			name = fmt.Sprintf("%s-%d", stamp, i)
			continue
		}
		if err != nil {
			return "", fmt.Errorf("backing up %s: %w", path, err)
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(name)
			return "", fmt.Errorf("backing up %s to %s: %w", path, name, werr)
		}
		return name, nil
	}
}
