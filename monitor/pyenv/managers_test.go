package pyenv_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// pyvenv.cfg as each tool writes it (the key order and spellings are the
// tools' own: CPython 3.11's venv, virtualenv 20.26, uv 0.5).
const (
	cfgVenv        = pyenvtest.CfgVenv
	cfgVirtualenv  = pyenvtest.CfgVirtualenv
	cfgUV          = pyenvtest.CfgUV
	cfgVenvWindows = "home = C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python311\r\ninclude-system-site-packages = false\r\n" +
		"version = 3.11.7\r\nexecutable = C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python311\\python.exe\r\n" +
		"command = C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python311\\python.exe -m venv C:\\Users\\me\\proj\\.venv\r\n"
)

// writeFile writes content at root/rel, creating folders.
func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	must(t, pyenvtest.WriteFile(root, rel, content))
}

// writeDist writes a dist-info as an installer leaves it (pyenvtest.WriteDist).
func writeDist(t testing.TB, site, name, version, installer string) {
	t.Helper()
	must(t, pyenvtest.WriteDist(site, name, version, installer))
}

// TestInspectInstaller is installer detection: which manager Env.Installer
// names, from the markers each tool writes and the INSTALLER files its
// installs leave.
func TestInspectInstaller(t *testing.T) {
	torch := func(installer string) *pyenvtest.Torch {
		return &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: installer}
	}
	// bitsandbytes and llama-cpp-python are read with their INSTALLER
	// ("pip" as pyenvtest writes them); writeDist replaces bitsandbytes's.
	bnb := &pyenvtest.BNB{Version: "0.45.0", CUDALibs: []string{"124"}}
	llama := &pyenvtest.Llama{Version: "0.3.4", Backends: []string{"cuda"}}
	tests := []struct {
		name   string
		spec   pyenvtest.Spec
		cfg    string // replaces pyvenv.cfg when set
		mutate func(t *testing.T, root, site string)
		kind   string
		want   string
	}{
		{name: "venv, torch installed by pip", spec: pyenvtest.Spec{Torch: torch("pip\n")}, cfg: cfgVenv,
			kind: pyenv.KindVenv, want: pyenv.InstallerPip},
		{name: "virtualenv, torch installed by uv pip", spec: pyenvtest.Spec{Torch: torch("uv")}, cfg: cfgVirtualenv,
			kind: pyenv.KindVenv, want: pyenv.InstallerUV},
		{name: "Windows venv, torch installed by pip", spec: pyenvtest.Spec{Layout: pyenv.LayoutWindows, Torch: torch("pip\r\n")}, cfg: cfgVenvWindows,
			kind: pyenv.KindVenv, want: pyenv.InstallerPip},
		{name: "uv venv claims its env whatever torch's INSTALLER says", spec: pyenvtest.Spec{Manager: "uv", Torch: torch("pip\n")}, cfg: cfgUV,
			kind: pyenv.KindVenv, want: pyenv.InstallerUV},
		{name: "uv venv without torch", spec: pyenvtest.Spec{Manager: "uv"}, cfg: cfgUV,
			kind: pyenv.KindVenv, want: pyenv.InstallerUV},
		{name: "venv, no INSTALLER anywhere", spec: pyenvtest.Spec{Torch: torch("")}, cfg: cfgVenv,
			kind: pyenv.KindVenv, want: pyenv.InstallerUnknown},
		{name: "venv, torch without INSTALLER: the first package by name decides", spec: pyenvtest.Spec{Torch: torch(""), BNB: bnb, Llama: llama}, cfg: cfgVenv,
			mutate: func(t *testing.T, root, site string) { writeDist(t, site, "bitsandbytes", "0.45.0", "uv") },
			kind:   pyenv.KindVenv, want: pyenv.InstallerUV},
		{name: "venv, torch's INSTALLER beats the other packages'", spec: pyenvtest.Spec{Torch: torch("pip\n"), BNB: bnb}, cfg: cfgVenv,
			mutate: func(t *testing.T, root, site string) { writeDist(t, site, "bitsandbytes", "0.45.0", "uv") },
			kind:   pyenv.KindVenv, want: pyenv.InstallerPip},
		{name: "venv: conda's INSTALLER names no venv's manager", spec: pyenvtest.Spec{Torch: torch("conda\n")}, cfg: cfgVenv,
			kind: pyenv.KindVenv, want: pyenv.InstallerUnknown},
		{name: "venv: an installer not in the table is unknown", spec: pyenvtest.Spec{Torch: torch("poetry\n")}, cfg: cfgVenv,
			kind: pyenv.KindVenv, want: pyenv.InstallerUnknown},
		{name: "conda env with conda's torch", spec: pyenvtest.Spec{Manager: "conda", Torch: torch(""), CondaTorchBuild: "py3.11_cuda12.1_cudnn8.9.2_0"},
			kind: pyenv.KindConda, want: pyenv.InstallerConda},
		{name: "conda env claims its env over a pip-installed torch", spec: pyenvtest.Spec{Manager: "conda", Torch: torch("pip\n")},
			kind: pyenv.KindConda, want: pyenv.InstallerConda},
		{name: "conda-meta beside a plain pyvenv.cfg is conda's", spec: pyenvtest.Spec{Manager: "conda", Torch: torch("pip\n")},
			mutate: func(t *testing.T, root, site string) { writeFile(t, root, "pyvenv.cfg", cfgVenv) },
			kind:   pyenv.KindConda, want: pyenv.InstallerConda},
		{name: "a conda-meta link to a folder counts", spec: pyenvtest.Spec{Torch: torch("pip\n")}, cfg: cfgVenv,
			mutate: func(t *testing.T, root, site string) {
				must(t, os.Remove(filepath.Join(root, "pyvenv.cfg")))
				meta := filepath.Join(t.TempDir(), "conda-meta")
				writeFile(t, meta, "history", "==> 2024-11-20 10:00:00 <==\n")
				must(t, os.Symlink(meta, filepath.Join(root, "conda-meta")))
			},
			kind: pyenv.KindConda, want: pyenv.InstallerConda},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "env")
			must(t, pyenvtest.Write(root, tt.spec))
			if tt.cfg != "" {
				writeFile(t, root, "pyvenv.cfg", tt.cfg)
			}
			if tt.mutate != nil {
				tt.mutate(t, root, sitePackages(root, tt.spec.Layout))
			}
			env, err := pyenv.Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			if env.Kind != tt.kind || env.Installer != tt.want {
				t.Errorf("Kind, Installer = %q, %q; want %q, %q", env.Kind, env.Installer, tt.kind, tt.want)
			}
		})
	}
}

func TestIsEnvMarkerTypes(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  bool
	}{
		{"pyvenv.cfg file", func(t *testing.T, dir string) { writeFile(t, dir, "pyvenv.cfg", cfgVenv) }, true},
		{"pyvenv.cfg folder", func(t *testing.T, dir string) { must(t, os.MkdirAll(filepath.Join(dir, "pyvenv.cfg"), 0o755)) }, false},
		{"conda-meta folder", func(t *testing.T, dir string) {
			writeFile(t, dir, "conda-meta/history", "==> 2024-11-20 10:00:00 <==\n")
		}, true},
		{"conda-meta file", func(t *testing.T, dir string) { writeFile(t, dir, "conda-meta", "") }, false},
		{"conda-meta link to a folder", func(t *testing.T, dir string) {
			target := t.TempDir()
			must(t, os.Symlink(target, filepath.Join(dir, "conda-meta")))
		}, true},
		{"neither", func(t *testing.T, dir string) { writeFile(t, dir, "bin/python", "\x7fELF") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			if got := pyenv.IsEnv(dir); got != tt.want {
				t.Errorf("IsEnv = %v, want %v", got, tt.want)
			}
		})
	}
}
