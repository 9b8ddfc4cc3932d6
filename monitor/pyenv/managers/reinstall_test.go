package managers_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestReinstallCommand is the table's reinstall side: who reinstalls torch
// in each manager's environment, with which argv, and who refuses.
func TestReinstallCommand(t *testing.T) {
	const index = "https://download.pytorch.org/whl/cu124"
	specs := []string{"torch==2.5.1+cu124", "torchvision==0.20.1+cu124"}
	onPath := func(names ...string) func(string) (string, error) {
		return func(name string) (string, error) {
			if slices.Contains(names, name) {
				return "/opt/tools/bin/" + name, nil
			}
			return "", exec.ErrNotFound
		}
	}
	torch := func(installer string) *pyenvtest.Torch {
		return &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: installer}
	}
	type want struct {
		manager string
		argv    func(env, py string) []string // nil: no command
		reasons []string
		blocked string // a part of the refusal
	}
	uvArgv := func(env, py string) []string {
		return append(append([]string{"/opt/tools/bin/uv", "pip", "install", "--python", env, "--reinstall", "--no-deps"}, specs...), "--index-url", index)
	}
	ownPip := func(env, py string) []string {
		return append(append([]string{py, "-m", "pip", "install", "--force-reinstall", "--no-deps"}, specs...), "--index-url", index)
	}
	hostPip := func(host string) func(env, py string) []string {
		return func(env, py string) []string {
			return append(append([]string{host, "-m", "pip", "--python", py, "install", "--force-reinstall", "--no-deps"}, specs...), "--index-url", index)
		}
	}
	const (
		uvWhy      = "uv manages this environment, so uv reinstalls torch (--reinstall --no-deps keeps every other package as it is)"
		uvMissing  = "uv manages this environment but uv is not on PATH, so pip is used"
		ownPipWhy  = "the environment's own pip reinstalls torch (--force-reinstall --no-deps keeps every other package as it is)"
		hostPipWhy = "the environment has no pip of its own, so the host's pip installs into it with --python (pip 22.3 or newer)"
	)
	tests := []struct {
		name string
		dir  string // the environment's folder name (a space tests quoting)
		spec pyenvtest.Spec
		look func(string) (string, error)
		host string
		want want
	}{
		{name: "uv venv, uv on PATH", spec: pyenvtest.Spec{Manager: "uv", Torch: torch("uv")}, look: onPath("uv", "python3"),
			want: want{manager: "uv", argv: uvArgv, reasons: []string{uvWhy}}},
		{name: "uv venv whose torch pip installed: uv still reinstalls", spec: pyenvtest.Spec{Manager: "uv", Torch: torch("pip\n")}, look: onPath("uv"),
			want: want{manager: "uv", argv: uvArgv, reasons: []string{uvWhy}}},
		{name: "uv venv, no uv on PATH, no pip inside: the host's pip", spec: pyenvtest.Spec{Manager: "uv", Torch: torch("uv")}, look: onPath("python3"),
			want: want{manager: "pip", argv: hostPip("/opt/tools/bin/python3"), reasons: []string{uvMissing, hostPipWhy}}},
		{name: "uv venv, no uv, a host interpreter given", spec: pyenvtest.Spec{Manager: "uv", Torch: torch("uv")}, look: onPath(), host: "/usr/bin/python3.12",
			want: want{manager: "pip", argv: hostPip("/usr/bin/python3.12"), reasons: []string{uvMissing, hostPipWhy}}},
		{name: "uv venv, nothing on PATH: python3 as a word", spec: pyenvtest.Spec{Manager: "uv", Torch: torch("uv")}, look: onPath(),
			want: want{manager: "pip", argv: hostPip("python3"), reasons: []string{uvMissing, hostPipWhy}}},
		{name: "venv with pip, uv on PATH: the env's own pip", spec: pyenvtest.Spec{Torch: torch("pip\n")}, look: onPath("uv"),
			want: want{manager: "pip", argv: ownPip, reasons: []string{ownPipWhy}}},
		{name: "venv whose torch uv pip installed: uv", spec: pyenvtest.Spec{Torch: torch("uv")}, look: onPath("uv"),
			want: want{manager: "uv", argv: uvArgv, reasons: []string{uvWhy}}},
		{name: "venv of unknown installer: pip", spec: pyenvtest.Spec{Torch: torch("")}, look: onPath("uv"),
			want: want{manager: "pip", argv: ownPip, reasons: []string{ownPipWhy}}},
		{name: "conda's torch: conda refuses with its own command", dir: "my env", spec: pyenvtest.Spec{Manager: "conda", Torch: torch(""), CondaTorchBuild: "py3.11_cpu_0"},
			look: onPath("uv"),
			want: want{manager: "conda", blocked: "installed by conda; reinstalling it with pip would leave conda's records wrong. Reinstall it with conda (for example `conda install -p 'ROOT' pytorch pytorch-cuda=12.4 -c pytorch -c nvidia`)"}},
		{name: "pip's torch in a conda env: the env's pip", spec: pyenvtest.Spec{Manager: "conda", Torch: torch("pip\n")}, look: onPath("uv"),
			want: want{manager: "pip", argv: ownPip, reasons: []string{ownPipWhy}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir
			if dir == "" {
				dir = "env"
			}
			root := filepath.Join(t.TempDir(), dir)
			must(t, pyenvtest.Write(root, tt.spec))
			env, err := pyenv.Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			py := filepath.Join(root, "bin", "python")
			got := managers.ReinstallCommand(env.Torch(), managers.ReinstallRequest{
				Env: env, Python: py, Specs: specs, Index: index, CUDA: "12.4",
				LookPath: tt.look, HostPython: tt.host, Quote: func(s string) string { return "'" + s + "'" },
			})
			if got.Manager != tt.want.manager {
				t.Errorf("Manager = %q, want %q", got.Manager, tt.want.manager)
			}
			var wantArgv []string
			if tt.want.argv != nil {
				wantArgv = tt.want.argv(root, py)
			}
			if !slices.Equal(got.Argv, wantArgv) {
				t.Errorf("Argv =\n%q\nwant\n%q", got.Argv, wantArgv)
			}
			if !slices.Equal(got.Reasons, tt.want.reasons) {
				t.Errorf("Reasons = %q, want %q", got.Reasons, tt.want.reasons)
			}
			wantBlocked := strings.ReplaceAll(tt.want.blocked, "ROOT", root)
			if (got.Blocked == "") != (wantBlocked == "") || !strings.Contains(got.Blocked, wantBlocked) {
				t.Errorf("Blocked = %q, want it to hold %q", got.Blocked, wantBlocked)
			}
		})
	}
}

// TestReinstallRealLookPath: with no LookPath the request searches PATH,
// so a uv on PATH is found the way the plan will run it.
func TestReinstallRealLookPath(t *testing.T) {
	bin := t.TempDir()
	uv := filepath.Join(bin, "uv")
	must(t, os.WriteFile(uv, []byte("#!/bin/sh\nexit 0\n"), 0o755))
	t.Setenv("PATH", bin)
	root := filepath.Join(t.TempDir(), "env")
	must(t, pyenvtest.Write(root, pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", Installer: "uv"}}))
	env, err := pyenv.Inspect(root)
	if err != nil {
		t.Fatal(err)
	}
	got := managers.ReinstallCommand(env.Torch(), managers.ReinstallRequest{Env: env, Python: filepath.Join(root, "bin", "python"), Specs: []string{"torch==2.5.1+cu124"}, Index: "I"})
	if got.Manager != "uv" || len(got.Argv) == 0 || got.Argv[0] != uv {
		t.Errorf("ReinstallCommand = %+v, want uv at %s", got, uv)
	}
}

// TestReinstallForms: each install form gives pip and uv their own flags
// (a repair forced without dependencies, an install that adds what is
// missing with no flags, a forced repair with dependencies) and says so
// in the reason.
func TestReinstallForms(t *testing.T) {
	const index = "https://download.pytorch.org/whl/cu124"
	specs := []string{"torch==2.5.1+cu124"}
	tests := []struct {
		form          managers.InstallForm
		pip, uv       []string // the flags between "install" (uv: ENV) and the pins
		pipWhy, uvWhy string
	}{
		{managers.FormRepair, []string{"--force-reinstall", "--no-deps"}, []string{"--reinstall", "--no-deps"},
			"(--force-reinstall --no-deps keeps every other package as it is)", "(--reinstall --no-deps keeps every other package as it is)"},
		{managers.FormInstall, nil, nil,
			"(no --no-deps: it installs what the pins require that is missing and leaves the rest as it is)", "(no --no-deps: it installs what the pins require that is missing and leaves the rest as it is)"},
		{managers.FormRepairAll, []string{"--force-reinstall"}, []string{"--reinstall"},
			"(--force-reinstall without --no-deps rewrites the pins and reinstalls what they require)", "(--reinstall without --no-deps rewrites the pins and reinstalls what they require)"},
	}
	for _, tt := range tests {
		for _, uv := range []bool{false, true} {
			spec := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip\n"}}
			if uv {
				spec = pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "uv"}}
			}
			root := filepath.Join(t.TempDir(), "env")
			must(t, pyenvtest.Write(root, spec))
			env, err := pyenv.Inspect(root)
			must(t, err)
			py := filepath.Join(root, "bin", "python")
			got := managers.ReinstallCommand(env.Torch(), managers.ReinstallRequest{Env: env, Python: py, Specs: specs, Index: index, Form: tt.form,
				LookPath: func(name string) (string, error) { return "/opt/bin/" + name, nil }})
			head, flags, why := []string{py, "-m", "pip", "install"}, tt.pip, tt.pipWhy
			if uv {
				head, flags, why = []string{"/opt/bin/uv", "pip", "install", "--python", root}, tt.uv, tt.uvWhy
			}
			want := slices.Concat(head, flags, specs, []string{"--index-url", index})
			if !slices.Equal(got.Argv, want) {
				t.Errorf("form %d, uv %v: Argv =\n%q\nwant\n%q", tt.form, uv, got.Argv, want)
			}
			if len(got.Reasons) != 1 || !strings.HasSuffix(got.Reasons[0], why) {
				t.Errorf("form %d, uv %v: Reasons = %q, want one ending %q", tt.form, uv, got.Reasons, why)
			}
		}
	}
}

// TestEmbeddedReinstall: the repair runs the embedded Python's own pip
// with -s.
func TestEmbeddedReinstall(t *testing.T) {
	envPath, err := pyenvtest.ComfyUIPortable(t.TempDir(), pyenvtest.Spec{Python: "3.12",
		Torch: &pyenvtest.Torch{DistVersion: "2.7.0+cpu", Installer: "pip"}})
	must(t, err)
	env, err := pyenv.Inspect(envPath)
	must(t, err)
	c := managers.ReinstallCommand(env.Torch(), managers.ReinstallRequest{Env: env, Python: env.Interpreter(),
		Specs: []string{"torch==2.7.0+cu128"}, Index: "https://download.pytorch.org/whl/cu128",
		LookPath: func(string) (string, error) { return "", os.ErrNotExist }})
	want := []string{filepath.Join(envPath, "python.exe"), "-s", "-m", "pip", "install", "--force-reinstall", "--no-deps",
		"torch==2.7.0+cu128", "--index-url", "https://download.pytorch.org/whl/cu128"}
	if c.Manager != "embedded" || !slices.Equal(c.Argv, want) {
		t.Errorf("reinstall = %s %q", c.Manager, c.Argv)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
