package pyenv_test

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// memDisk is a Disk over a tree held in memory, its paths absolute.
type memDisk struct {
	fs  fstest.MapFS
	env map[string]string
}

var _ pyenv.Disk = memDisk{}

func (m memDisk) rel(path string) string {
	return strings.TrimPrefix(filepath.ToSlash(filepath.Clean(path)), "/")
}

func (m memDisk) Stat(path string) (fs.FileInfo, error)  { return fs.Stat(m.fs, m.rel(path)) }
func (m memDisk) Lstat(path string) (fs.FileInfo, error) { return fs.Stat(m.fs, m.rel(path)) }

func (m memDisk) ReadDir(path string) ([]fs.DirEntry, error) {
	fi, err := m.Stat(path)
	if err == nil && !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: safefs.ErrNotDir}
	}
	return fs.ReadDir(m.fs, m.rel(path))
}

func (m memDisk) ReadFile(path string, limit int64) ([]byte, error) {
	fi, err := m.Stat(path)
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, &fs.PathError{Op: "open", Path: path, Err: safefs.ErrNotRegular}
	case fi.Size() > limit:
		return nil, &fs.PathError{Op: "read", Path: path, Err: safefs.ErrTooLarge}
	}
	return fs.ReadFile(m.fs, m.rel(path))
}

func (m memDisk) Open(path string) (io.ReadCloser, error) {
	if fi, err := m.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: safefs.ErrNotRegular}
	}
	return m.fs.Open(m.rel(path))
}

func (m memDisk) Readlink(path string) (string, error) {
	return "", &fs.PathError{Op: "readlink", Path: path, Err: errors.New("invalid argument")}
}

func (m memDisk) Getenv(name string) string { return m.env[name] }

// TestReaderReadsItsDisk: an environment read from a copy of its files
// held in memory, after the files on disk are gone, is the environment
// read from disk: every look of the read goes to the Reader's Disk.
func TestReaderReadsItsDisk(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the memory disk's paths are POSIX")
	}
	home := t.TempDir()
	root := filepath.Join(home, "proj", ".venv")
	spec := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip"},
		Vision: &pyenvtest.Companion{Version: "0.20.1+cu121", CUDA: "12.1"},
		BNB:    &pyenvtest.BNB{Version: "0.44.1", CUDALibs: []string{"121"}}}
	if err := pyenvtest.Write(root, spec); err != nil {
		t.Fatal(err)
	}
	// The Python the venv was made with, inside the tree that moves to
	// memory: a read looks at it (pyvenv.cfg's home).
	py := filepath.Join(home, "python")
	for _, rel := range []string{"bin/python3.11", "lib/python3.11/os.py"} {
		if err := pyenvtest.WriteFile(py, rel, ""); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(root, "pyvenv.cfg")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.ReplaceAll(string(data), "/usr/bin", filepath.Join(py, "bin")))
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"HOME": home}
	o := pyenv.InspectOptions{Home: home, Getenv: func(k string) string { return vars[k] }}
	want, err := pyenv.InspectWith(root, o)
	if err != nil {
		t.Fatal(err)
	}
	mem := fstest.MapFS{}
	err = filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		f := &fstest.MapFile{Mode: fi.Mode(), ModTime: fi.ModTime()}
		if fi.Mode().IsRegular() {
			if f.Data, err = os.ReadFile(path); err != nil {
				return err
			}
		}
		mem[strings.TrimPrefix(path, "/")] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(py); err != nil {
		t.Fatal(err)
	}
	rd := &pyenv.Reader{Disk: memDisk{fs: mem, env: vars}}
	got, err := rd.Inspect(root, pyenv.InspectOptions{Home: home})
	if err != nil {
		t.Fatalf("reading the environment from memory: %v", err)
	}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("read from memory:\n%s\nread from disk:\n%s", g, w)
	}
	if got.Torch() == nil || got.Torch().Installer != "pip" {
		t.Errorf("torch read from memory: %+v", got.Torch())
	}
	// The real disk, where the files no longer are, says so.
	if _, err := pyenv.InspectWith(root, o); err == nil {
		t.Error("the real disk read the removed environment")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
