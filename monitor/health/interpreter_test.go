package health

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// codeFix is a finding by code: its severity and fix.
type codeFix struct {
	sev finding.Severity
	fix string
}

func byCode(fs []finding.Finding) map[string]codeFix {
	out := map[string]codeFix{}
	for _, f := range fs {
		out[f.Code] = codeFix{f.Severity, f.Fix}
	}
	return out
}

// TestEnvironmentIntegrityFindings: a venv whose interpreter is gone is
// ENV_INTERPRETER_MISSING, and one whose interpreter runs another Python
// than its packages' ENV_PYTHON_MISMATCH, both errors whose fix makes the
// venv again with the packages' Python, and no finding there offers a
// command that runs the venv's Python (it cannot run); torch files that
// cannot be imported are TORCH_INSTALL_BROKEN errors with the reinstall,
// a METADATA whose build disagrees with version.py a warning.
func TestEnvironmentIntegrityFindings(t *testing.T) {
	cpuLlama := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip\n"},
		Llama: &pyenvtest.Llama{Version: "0.3.2", Backends: []string{"cpu"}}}
	cuda := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}}
	tests := []struct {
		name   string
		spec   pyenvtest.Spec
		mutate func(t *testing.T, root string)
		want   map[string]codeFix // FIX: fix's command, ENV: the venv
	}{
		{
			name: "interpreter gone", spec: cpuLlama,
			mutate: func(t *testing.T, root string) {
				py := filepath.Join(root, "bin", "python")
				if err := os.Remove(py); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("/nonexistent/bin/python3.11", py); err != nil {
					t.Fatal(err)
				}
			},
			want: map[string]codeFix{
				finding.CodeEnvInterpreterMissing: {finding.SeverityError, "rm -f ENV/bin/python && python3.11 -m venv --without-pip ENV"},
				finding.CodeTorchCPUBuild:         {finding.SeverityError, ""},
				finding.CodeLlamaCPPCPUBuild:      {finding.SeverityError, ""},
			},
		},
		{
			name: "pyvenv.cfg's Python is not the packages'", spec: cuda,
			mutate: func(t *testing.T, root string) {
				cfg := filepath.Join(root, "pyvenv.cfg")
				data, err := os.ReadFile(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(cfg, []byte(strings.Replace(string(data), "version = 3.11.7", "version = 3.12.3", 1)), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want: map[string]codeFix{finding.CodeEnvPythonMismatch: {finding.SeverityError, "python3.11 -m venv --without-pip ENV"}},
		},
		{
			name: "an empty libtorch_cuda", spec: cuda,
			mutate: func(t *testing.T, root string) {
				if err := os.WriteFile(filepath.Join(root, "lib", "python3.11", "site-packages", "torch", "lib", "libtorch_cuda.so"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want: map[string]codeFix{finding.CodeTorchInstallBroken: {finding.SeverityError, "FIX"}},
		},
		{
			name: "METADATA and version.py of two releases",
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", VersionPy: "2.4.0+cu121", CUDA: "12.1", Installer: "pip\n"}},
			want: map[string]codeFix{finding.CodeTorchInstallBroken: {finding.SeverityError, "FIX"}},
		},
		{
			name: "METADATA +cpu over a CUDA version.py",
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", VersionPy: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}},
			want: map[string]codeFix{finding.CodeTorchInstallBroken: {finding.SeverityWarning, "FIX"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "env")
			if err := pyenvtest.Write(root, tt.spec); err != nil {
				t.Fatal(err)
			}
			if tt.mutate != nil {
				tt.mutate(t, root)
			}
			env, err := pyenv.Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			fs := CheckEnv(env, a100Driver550, Options{})
			got := byCode(fs)
			if len(got) != len(tt.want) {
				t.Fatalf("findings:\n%s\nwant codes %v", dump(fs), tt.want)
			}
			for code, w := range tt.want {
				g, ok := got[code]
				switch {
				case !ok || g.sev != w.sev:
					t.Errorf("%s: %+v, want severity %s\n%s", code, g, w.sev, dump(fs))
				case w.fix == "FIX" && !strings.Contains(g.fix, " install "):
					t.Errorf("%s: fix %q, want the reinstall", code, g.fix)
				case w.fix != "FIX" && g.fix != strings.ReplaceAll(w.fix, "ENV", root):
					t.Errorf("%s: fix %q, want %q", code, g.fix, strings.ReplaceAll(w.fix, "ENV", root))
				}
			}
		})
	}
}

// TestRecreateFixWorks: the fix shown for a real venv whose linked
// interpreter was deleted, and for one whose base was upgraded from 3.11
// to 3.12 in place, run as shown by bash with a Python 3.11 on PATH,
// makes the venv run again with its packages: its python imports the
// torch it holds, and the finding is gone.
func TestRecreateFixWorks(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3.11"); err != nil {
		t.Skip("no /usr/bin/python3.11")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, base string)
		code  string
	}{
		{"installation deleted", func(t *testing.T, base string) { mustDo(t, os.RemoveAll(base)) }, finding.CodeEnvInterpreterMissing},
		{"installation upgraded to 3.12", func(t *testing.T, base string) {
			mustDo(t, os.WriteFile(filepath.Join(base, "bin", "python3.12"), []byte("\x7fELF"), 0o755))
			mustDo(t, os.Remove(filepath.Join(base, "bin", "python3")))
			mustDo(t, os.Symlink("python3.12", filepath.Join(base, "bin", "python3")))
		}, finding.CodeEnvPythonMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			// an installed Python whose python3 runs /usr/bin/python3.11
			base := filepath.Join(tmp, "cpython")
			mustDo(t, os.MkdirAll(filepath.Join(base, "bin"), 0o755))
			mustDo(t, os.Symlink("/usr/bin/python3.11", filepath.Join(base, "bin", "python3.11")))
			mustDo(t, os.Symlink("python3.11", filepath.Join(base, "bin", "python3")))
			venv := filepath.Join(tmp, "venv")
			if out, err := exec.Command(filepath.Join(base, "bin", "python3"), "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
				t.Fatalf("venv: %v\n%s", err, out)
			}
			fixture := filepath.Join(tmp, "fixture")
			mustDo(t, pyenvtest.Write(fixture, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}}))
			site := filepath.Join(venv, "lib", "python3.11", "site-packages")
			mustDo(t, os.RemoveAll(site))
			mustDo(t, os.Rename(filepath.Join(fixture, "lib", "python3.11", "site-packages"), site))
			tc.spoil(t, base)

			env, err := pyenv.Inspect(venv)
			mustDo(t, err)
			var fixCmd string
			for _, f := range CheckEnv(env, a100Driver550, Options{}) {
				if f.Code == tc.code {
					fixCmd = f.Fix
				}
			}
			if fixCmd == "" {
				t.Fatalf("no %s finding with a fix; problems %+v", tc.code, env.Problems)
			}
			// python3.11 on PATH is this system's
			bin := filepath.Join(tmp, "path")
			mustDo(t, os.MkdirAll(bin, 0o755))
			mustDo(t, os.Symlink("/usr/bin/python3.11", filepath.Join(bin, "python3.11")))
			sh := exec.Command("bash", "-c", fixCmd)
			sh.Env = append(os.Environ(), "PATH="+bin+":/usr/bin:/bin")
			if out, err := sh.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", fixCmd, err, out)
			}
			out, err := exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import torch; print(torch.__version__)").CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "2.5.1+cu121" {
				t.Fatalf("after the fix, import torch: %v\n%s", err, out)
			}
			env, err = pyenv.Inspect(venv)
			mustDo(t, err)
			for _, f := range CheckEnv(env, a100Driver550, Options{}) {
				t.Errorf("after the fix: %s %s", f.Code, f.Message)
			}
		})
	}
}

// TestKernelGone: a kernel whose interpreter does not exist is a warning
// naming the kernel and the interpreter, whose fix removes the kernel.
func TestKernelGone(t *testing.T) {
	f := KernelGone("/gone/envs/gpu", "/home/me/.local/share/jupyter/kernels/gpu/kernel.json", "/gone/envs/gpu/bin/python")
	if f.Code != finding.CodeEnvInterpreterMissing || f.Severity != finding.SeverityWarning || f.Env != "/gone/envs/gpu" ||
		f.Fix != "jupyter kernelspec remove -y gpu" || !strings.Contains(f.Message, `kernel "gpu"`) || !strings.Contains(f.Message, "/gone/envs/gpu/bin/python, which does not exist") {
		t.Errorf("KernelGone = %+v", f)
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
