package pyenvtest

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The single files and folders of an environment, each as its tool
// writes it, for the tests of reading (pyenv) and of the search
// (envsearch) that lay out one part by hand rather than a whole Spec.

// pyvenv.cfg as each tool writes it (the key order and spellings are the
// tools' own: CPython 3.11's venv, virtualenv 20.26, uv 0.5).
const (
	CfgVenv = "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.7\n" +
		"executable = /usr/bin/python3.11\ncommand = /usr/bin/python3 -m venv /home/me/proj/.venv\n"
	CfgVirtualenv = "home = /usr/bin\nimplementation = CPython\nversion_info = 3.11.7.final.0\nvirtualenv = 20.26.6\n" +
		"include-system-site-packages = false\nbase-prefix = /usr\nbase-exec-prefix = /usr\nbase-executable = /usr/bin/python3.11\n"
	CfgUV = "home = /usr/bin\nimplementation = CPython\nuv = 0.5.11\nversion_info = 3.11.7\n" +
		"include-system-site-packages = false\nprompt = proj\n"
)

// WriteFile writes content at root/rel (a slash path), creating folders.
func WriteFile(root, rel, content string) error {
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

// WriteDist writes a dist-info into site as an installer leaves it:
// METADATA, INSTALLER (when installer is not ""), the package's
// __init__.py and a RECORD that lists them with their sha256.
func WriteDist(site, name, version, installer string) error {
	dist := strings.ReplaceAll(name, "-", "_") + "-" + version + ".dist-info"
	files := map[string]string{
		dist + "/METADATA": fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", name, version),
		strings.ReplaceAll(name, "-", "_") + "/__init__.py": "",
	}
	if installer != "" {
		files[dist+"/INSTALLER"] = installer
	}
	var record strings.Builder
	for _, rel := range slices.Sorted(func(yield func(string) bool) {
		for k := range files {
			if !yield(k) {
				return
			}
		}
	}) {
		sum := sha256.Sum256([]byte(files[rel]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", rel, base64.RawURLEncoding.EncodeToString(sum[:]), len(files[rel]))
		if err := WriteFile(site, rel, files[rel]); err != nil {
			return err
		}
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", dist)
	return WriteFile(site, dist+"/RECORD", record.String())
}

// WritePrefix lays out an interpreter's own installation as CPython's
// `make install` (and pyenv, python-build-standalone) does: bin/python3.X
// with python3 linking to it, lib/python3.X/os.py (the landmark) and
// lib/python3.X/site-packages. It returns the site-packages folder.
func WritePrefix(prefix, py string) (string, error) {
	if err := WriteFile(prefix, "bin/python"+py, "\x7fELF"); err != nil {
		return "", err
	}
	if err := os.Symlink("python"+py, filepath.Join(prefix, "bin", "python3")); err != nil {
		return "", err
	}
	if err := WriteFile(prefix, "lib/python"+py+"/os.py", "r\"\"\"OS routines for NT or Posix depending on what system we're on.\"\"\"\n"); err != nil {
		return "", err
	}
	site := filepath.Join(prefix, "lib", "python"+py, "site-packages")
	return site, os.MkdirAll(site, 0o755)
}

// WriteTorch writes a torch into a site folder as a wheel install leaves
// it: torch/version.py, torch/lib and the dist-info (METADATA, INSTALLER,
// RECORD); cuda "" is a CPU build.
func WriteTorch(site, version, cuda string) error {
	if err := WriteDist(site, "torch", version, "pip\n"); err != nil {
		return err
	}
	cudaLine := "None"
	libs := []string{"libtorch_cpu.so"}
	if cuda != "" {
		cudaLine, libs = "'"+cuda+"'", append(libs, "libtorch_cuda.so")
	}
	if err := WriteFile(site, "torch/version.py", "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"+
		"__version__ = '"+version+"'\ndebug = False\ncuda: Optional[str] = "+cudaLine+"\ngit_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'\nhip: Optional[str] = None\n"); err != nil {
		return err
	}
	for _, l := range libs {
		if err := WriteFile(site, "torch/lib/"+l, "\x7fELF"); err != nil {
			return err
		}
	}
	return nil
}

// DateBack dates every file and folder under root ago in the past, as an
// environment installed that long before it is read: a file written
// within filefacts.Racy of a read is read afresh every time, which no
// user's environment is, so benchmarks of warm reads date theirs back.
func DateBack(root string, ago time.Duration) error {
	at := time.Now().Add(-ago)
	return filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, at, at)
	})
}
