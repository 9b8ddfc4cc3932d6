package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestCheckImportWouldFail: environments whose files are all there by
// name but where `import torch` fails are errors in check's text and
// JSON, exit 1: a venv whose interpreter links into a deleted
// installation (fixed by making the venv again, never by its own pip),
// one whose base was upgraded from 3.11 to 3.12 in place, an empty
// libtorch_cuda, a torch/__init__.py deleted, a core built for Python
// 3.10, and a METADATA of another release than version.py.
func TestCheckImportWouldFail(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	root := t.TempDir()
	site := func(env string) string { return filepath.Join(env, "lib", "python3.11", "site-packages") }
	cuda := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}}
	write := func(name string, s pyenvtest.Spec, spoil func(env string) error) string {
		env := filepath.Join(root, name)
		if err := pyenvtest.Write(env, s); err != nil {
			t.Fatal(err)
		}
		if err := spoil(env); err != nil {
			t.Fatal(err)
		}
		return env
	}
	relinkPython := func(target string) func(env string) error {
		return func(env string) error {
			if err := os.Remove(filepath.Join(env, "bin", "python")); err != nil {
				return err
			}
			return os.Symlink(target, filepath.Join(env, "bin", "python"))
		}
	}
	base := pythonBase312(t, root)
	envs := []struct {
		path, code, says string
	}{
		{write("dead", cuda, relinkPython(filepath.Join(root, "gone", "bin", "python3.11"))), "ENV_INTERPRETER_MISSING", "gone/bin/python3.11, which does not exist"},
		{write("upgraded", cuda, relinkPython(filepath.Join(base, "bin", "python3.12"))), "ENV_PYTHON_MISMATCH", "interpreter is Python 3.12"},
		{write("emptylib", cuda, func(env string) error {
			return os.WriteFile(filepath.Join(site(env), "torch", "lib", "libtorch_cuda.so"), nil, 0o644)
		}), "TORCH_INSTALL_BROKEN", "libtorch_cuda.so is empty"},
		{write("noinit", cuda, func(env string) error { return os.Remove(filepath.Join(site(env), "torch", "__init__.py")) }),
			"TORCH_INSTALL_BROKEN", "torch/__init__.py is missing"},
		{write("cp310", cuda, func(env string) error {
			return os.WriteFile(filepath.Join(site(env), "torch", "_C.cpython-310-x86_64-linux-gnu.so"), []byte("\x7fELF"), 0o644)
		}), "TORCH_INSTALL_BROKEN", "built for Python 3.10, but the environment runs Python 3.11"},
		{write("mixed", pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", VersionPy: "2.4.0+cu121", CUDA: "12.1", Installer: "pip\n"}},
			func(string) error { return nil }), "TORCH_INSTALL_BROKEN", "says Version: 2.5.1+cu121 but"},
	}
	sim := simFile(t, simA100)
	args := []string{"--gpu-sim", sim, "check"}
	for _, e := range envs {
		args = append(args, e.path)
	}
	out, errOut, code := runCLI(t, args...)
	if code != exitFound {
		t.Fatalf("check exited %d, want %d\n%s%s", code, exitFound, out, errOut)
	}
	for _, e := range envs {
		block := envBlock(out, e.path)
		if !strings.Contains(block, "ERROR") || !strings.Contains(block, e.code) || !strings.Contains(block, e.says) {
			t.Errorf("%s: want ERROR, %s saying %q:\n%s", e.path, e.code, e.says, block)
		}
	}
	dead := envBlock(out, envs[0].path)
	if !strings.Contains(dead, "fix: rm -f "+envs[0].path+"/bin/python && python3.11 -m venv --without-pip "+envs[0].path) || strings.Contains(dead, "-m pip") {
		t.Errorf("the dead venv's fix must make it again, never run its pip:\n%s", dead)
	}

	jsonOut, _, code := runCLI(t, append([]string{"--gpu-sim", sim, "check", "--json"}, args[3:]...)...)
	if code != exitFound {
		t.Fatalf("check --json exited %d", code)
	}
	var res monitor.CheckResult
	if err := json.Unmarshal([]byte(jsonOut), &res); err != nil {
		t.Fatal(err)
	}
	for i, rep := range res.Envs {
		found := false
		for _, f := range rep.Findings {
			found = found || f.Code == envs[i].code && f.Severity == "error"
		}
		if rep.Verdict != monitor.VerdictError || !found {
			t.Errorf("%s: verdict %s, findings %+v; want error with %s", rep.Path, rep.Verdict, rep.Findings, envs[i].code)
		}
	}
}

// envBlock is the part of check's text output about the environment at
// path: its line and those under it, up to the next environment's.
// pythonBase312 writes under root a Python 3.12 installation as far as
// GPU Canary reads one without running it (an interpreter file, the
// standard library's landmark) and returns its prefix: the base a venv
// of 3.11 packages was upgraded to in place.
func pythonBase312(t *testing.T, root string) string {
	t.Helper()
	base := filepath.Join(root, "base312")
	for _, f := range []struct{ name, data string }{{"bin/python3.12", "\x7fELF"}, {"lib/python3.12/os.py", ""}} {
		p := filepath.Join(base, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

func envBlock(out, path string) string {
	i := strings.Index(out, path+"  (")
	if i < 0 {
		return ""
	}
	rest := out[i:]
	if j := strings.Index(rest, "\n\n"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// TestCheckKernelGone: a Jupyter kernel whose interpreter was deleted with
// its environment is in check --json, found through its kernel.json, as
// a warning whose fix removes the kernel; it is not dropped.
func TestCheckKernelGone(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	gone := filepath.Join(tmp, "gone", "envs", "gpu")
	kernel := filepath.Join(home, ".local", "share", "jupyter", "kernels", "gpu", "kernel.json")
	if err := os.MkdirAll(filepath.Dir(kernel), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kernel, []byte(`{"argv": ["`+gone+`/bin/python", "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "GPU", "language": "python"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cwd := filepath.Join(tmp, "cwd")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := programCommand(t, "--gpu-sim", simFile(t, simA100), "check", "--json")
	cmd.Dir = cwd
	cmd.Env = append(cmd.Env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(tmp, "cfg"), "XDG_STATE_HOME="+filepath.Join(tmp, "state"),
		"XDG_DATA_HOME=", "JUPYTER_PATH=", "JUPYTER_DATA_DIR=", "VIRTUAL_ENV=", "CONDA_PREFIX=")
	out, err := cmd.Output()
	if err != nil && cmd.ProcessState.ExitCode() > 1 {
		t.Fatalf("check: %v\n%s", err, out)
	}
	var res monitor.CheckResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, rep := range res.Envs {
		if rep.Path != gone {
			continue
		}
		if rep.Via != "jupyter" || rep.From != kernel || rep.Verdict != monitor.VerdictWarning || len(rep.Findings) != 1 ||
			rep.Findings[0].Code != "ENV_INTERPRETER_MISSING" || rep.Findings[0].Fix != "jupyter kernelspec remove -y gpu" {
			t.Errorf("the gone kernel's report: %+v, findings %+v", rep, rep.Findings)
		}
		return
	}
	t.Errorf("no report on %s, where the kernel's environment was:\n%s", gone, out)
}

// TestFixDeadInterpreter: `gpucanary fix` on a venv whose interpreter is
// gone, or runs another Python than its packages', runs nothing (every
// installer starts that interpreter) and exits 1 "Not fixed", saying
// which it is and giving the command that makes the venv again, the one
// check gives; with --yes too, and for a CUDA torch that is otherwise
// fine, which is not "nothing to fix".
func TestFixDeadInterpreter(t *testing.T) {
	fixEnvSetup(t)
	root := t.TempDir()
	relink := func(env, target string) {
		if err := os.Remove(filepath.Join(env, "bin", "python")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(env, "bin", "python")); err != nil {
			t.Fatal(err)
		}
	}
	base := pythonBase312(t, root)
	cpu := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip\n"}}
	cuda := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip\n"}}
	for _, tt := range []struct {
		name   string
		spec   pyenvtest.Spec
		target string
		says   string
	}{
		{"dead-cpu", cpu, filepath.Join(root, "gone", "bin", "python3.11"), "the environment's interpreter is missing"},
		{"dead-cuda", cuda, filepath.Join(root, "gone", "bin", "python3.11"), "the environment's interpreter is missing"},
		{"upgraded-cpu", cpu, filepath.Join(base, "bin", "python3.12"), "the environment's interpreter runs another Python than its packages': it runs Python 3.12"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := filepath.Join(root, tt.name)
			if err := pyenvtest.Write(env, tt.spec); err != nil {
				t.Fatal(err)
			}
			relink(env, tt.target)
			recreate := "rm -f " + env + "/bin/python && python3.11 -m venv --without-pip " + env
			out, errOut, code := runCLI(t, "--gpu-sim", simFile(t, simA100), "fix", "--yes", env)
			if code != exitFound || !strings.Contains(out, "Not fixed: "+tt.says) || !strings.Contains(out, "`"+recreate+"`") ||
				strings.Contains(out, "-m pip") || strings.Contains(out, "command:") || strings.Contains(out, "Nothing to fix") {
				t.Errorf("fix exited %d, want %d, Not fixed saying %q and %q, no pip command:\n%s%s", code, exitFound, tt.says, recreate, out, errOut)
			}
			if torch, _ := installed(t, env); torch != tt.spec.Torch.DistVersion {
				t.Errorf("torch is %s after fix, want it untouched", torch)
			}
		})
	}
}
