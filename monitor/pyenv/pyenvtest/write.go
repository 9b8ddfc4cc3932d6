package pyenvtest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// writer lays out one environment.
type writer struct {
	root string
	s    Spec
	win  bool
	site string // site-packages
	py   string // full python version, "3.11.7"
}

// Write creates the environment s describes at root (creating root).
func Write(root string, s Spec) error {
	if s.Manager == "embedded" {
		s.Layout = pyenv.LayoutWindows // python.org's embeddable package is Windows'
	}
	w := &writer{root: root, s: s, win: s.Layout == pyenv.LayoutWindows}
	if s.Python == "" {
		s.Python = "3.11"
		w.s.Python = s.Python
	}
	w.py = s.Python
	if strings.Count(w.py, ".") == 1 {
		w.py += ".7"
	}
	if w.win {
		w.site = filepath.Join(root, "Lib", "site-packages")
	} else {
		w.site = filepath.Join(root, "lib", "python"+s.Python, "site-packages")
	}
	if s.CondaTorchBuild != "" && s.Torch == nil {
		return fmt.Errorf("write environment %s: CondaTorchBuild needs a Torch", root)
	}
	steps := []func() error{w.skeleton, w.torch, w.companions, w.llama, w.bnb, w.nvidia}
	for _, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("write environment %s: %w", root, err)
		}
	}
	return nil
}

func (w *writer) file(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// skeleton writes the interpreter folders, pyvenv.cfg or conda-meta, and pip.
func (w *writer) skeleton() error {
	if err := os.MkdirAll(w.site, 0o755); err != nil {
		return err
	}
	manager := w.s.Manager
	if manager == "" {
		manager = "venv"
	}
	var files map[string]string
	switch {
	case manager == "embedded":
		files = embeddedFiles(w.s.Python)
	case manager == "conda" && w.win:
		files = map[string]string{"python.exe": "MZ", "Scripts/pip.exe": "MZ"}
	case manager == "conda":
		files = map[string]string{"bin/python" + w.s.Python: "\x7fELF", "bin/python": "\x7fELF"}
	case w.win:
		files = map[string]string{"Scripts/python.exe": "MZ", "Scripts/activate.bat": "@echo off\n"}
	default:
		files = map[string]string{"bin/python": "\x7fELF", "bin/activate": "# This file must be used with \"source bin/activate\"\n"}
	}
	home := "/usr/bin"
	if w.win {
		home = `C:\Users\me\AppData\Local\Programs\Python\Python311`
	}
	switch manager {
	case "venv":
		files["pyvenv.cfg"] = fmt.Sprintf("home = %s\ninclude-system-site-packages = false\nversion = %s\nexecutable = %s\ncommand = %s -m venv %s\n",
			home, w.py, home+"/python"+w.s.Python, home+"/python3", w.root)
	case "uv":
		files["pyvenv.cfg"] = fmt.Sprintf("home = %s\nimplementation = CPython\nuv = 0.5.11\nversion_info = %s\ninclude-system-site-packages = false\nprompt = project\n",
			home, w.py)
	case "embedded":
	case "conda":
		files["conda-meta/history"] = "==> 2024-11-20 10:00:00 <==\n# cmd: conda create -n ml python=" + w.s.Python + "\n"
		rec := fmt.Sprintf("python-%s-h955ad1f_0.json", w.py)
		files["conda-meta/"+rec] = condaRecordJSON("python", w.py, "h955ad1f_0", "pkgs/main")
	default:
		return fmt.Errorf("unknown manager %q", manager)
	}
	for name, content := range files {
		if err := w.file(filepath.Join(w.root, filepath.FromSlash(name)), content); err != nil {
			return err
		}
	}
	if manager != "uv" { // venv and conda seed pip; uv venvs have none
		return w.dist("pip", "24.3.1", "pip\n", nil, map[string]string{"pip/__init__.py": "__version__ = \"24.3.1\"\n"})
	}
	return nil
}

func condaRecordJSON(name, version, build, channel string) string {
	b, _ := json.MarshalIndent(map[string]any{
		"name": name, "version": version, "build": build,
		"channel": "https://repo.anaconda.com/" + channel, "files": []string{}, "depends": []string{},
	}, "", "  ")
	return string(b) + "\n"
}

// dist writes a dist-info folder for name and the package files, with a
// RECORD listing them with their sha256 as pip writes it.
func (w *writer) dist(name, version, installer string, requires []string, pkgFiles map[string]string) error {
	var meta strings.Builder
	fmt.Fprintf(&meta, "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nRequires-Python: >=3.9\n", name, version, name)
	for _, r := range requires {
		fmt.Fprintf(&meta, "Requires-Dist: %s\n", r)
	}
	fmt.Fprintf(&meta, "\n# %s\n\nA fixture written by pyenvtest.\n", name)
	distDir := strings.ReplaceAll(name, "-", "_") + "-" + version + ".dist-info"
	tag := "linux_x86_64"
	if w.win {
		tag = "win_amd64"
	}
	// built for the environment's Python, as pip would have chosen it
	cp := "cp" + strings.ReplaceAll(w.s.Python, ".", "")
	files := map[string]string{
		distDir + "/METADATA": meta.String(),
		distDir + "/WHEEL":    "Wheel-Version: 1.0\nGenerator: bdist_wheel (0.44.0)\nRoot-Is-Purelib: false\nTag: " + cp + "-" + cp + "-" + tag + "\n",
	}
	if installer != "" {
		files[distDir+"/INSTALLER"] = installer
	}
	for k, v := range pkgFiles {
		files[k] = v
	}
	names := make([]string, 0, len(files))
	for k := range files {
		names = append(names, k)
	}
	slices.Sort(names)
	var record strings.Builder
	for _, n := range names {
		sum := sha256.Sum256([]byte(files[n]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", n, base64.RawURLEncoding.EncodeToString(sum[:]), len(files[n]))
		if err := w.file(filepath.Join(w.site, filepath.FromSlash(n)), files[n]); err != nil {
			return err
		}
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", distDir)
	return w.file(filepath.Join(w.site, distDir, "RECORD"), record.String())
}

// libName is a native library's file name in the layout: "torch_cuda" ->
// libtorch_cuda.so or torch_cuda.dll.
func (w *writer) libName(stem string) string {
	if w.win {
		return stem + ".dll"
	}
	return "lib" + stem + ".so"
}

// minorOf returns the minor number of "2.5.1+cu121" (5), or -1.
func minorOf(v string) (int, int) {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return -1, -1
	}
	major, err1 := strconv.Atoi(parts[0])
	n := 0
	for n < len(parts[1]) && parts[1][n] >= '0' && parts[1][n] <= '9' {
		n++
	}
	minor, err2 := strconv.Atoi(parts[1][:n])
	if err1 != nil || err2 != nil {
		return -1, -1
	}
	return major, minor
}

// atLeast compares major.minor of v with want.
func atLeast(v string, major, minor int) bool {
	ma, mi := minorOf(v)
	return ma > major || ma == major && mi >= minor
}

func mkdir(p string) error { return os.MkdirAll(p, 0o755) }
