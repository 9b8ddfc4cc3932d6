package managers_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestWindowsLaunchers: on Windows an environment without pip is
// reinstalled by the Python launcher (py -3) aimed at its interpreter,
// else by python from PATH unless that is the Store's alias, never by
// python3; the environment's own pip comes first, and the plan says which.
func TestWindowsLaunchers(t *testing.T) {
	const index = "https://download.pytorch.org/whl/cu124"
	specs := []string{"torch==2.5.1+cu124"}
	found := func(paths map[string]string) func(string) (string, error) {
		return func(name string) (string, error) {
			if p, ok := paths[name]; ok {
				return p, nil
			}
			return "", exec.ErrNotFound
		}
	}
	const store = `C:\Users\me\AppData\Local\Microsoft\WindowsApps`
	tests := []struct {
		name     string
		pip      bool
		onPath   map[string]string
		wantHead []string // argv before "-m pip"
		wantWhy  string
	}{
		{"own pip first, whatever is on PATH", true, map[string]string{"py": `C:\Windows\py.exe`, "python3": store + `\python3.exe`},
			[]string{"PY", "-m", "pip", "install"}, "the environment's own pip reinstalls torch (--force-reinstall --no-deps keeps every other package as it is)"},
		{"no pip: py -3", false, map[string]string{"py": `C:\Windows\py.exe`, "python": `C:\Python312\python.exe`, "python3": store + `\python3.exe`},
			[]string{`C:\Windows\py.exe`, "-3", "-m", "pip", "--python", "PY"}, "the environment has no pip of its own, so the Python launcher's pip (py -3) installs into it with --python (pip 22.3 or newer)"},
		{"no pip, no py: python from PATH", false, map[string]string{"python": `C:\Python312\python.exe`, "python3": store + `\python3.exe`},
			[]string{`C:\Python312\python.exe`, "-m", "pip", "--python", "PY"}, "the environment has no pip of its own, so the host's pip (python from PATH) installs into it with --python (pip 22.3 or newer)"},
		{"no pip, only the Store's aliases: python as a word, never python3", false, map[string]string{"python": store + `\python.exe`, "python3": store + `\python3.exe`},
			[]string{"python", "-m", "pip", "--python", "PY"}, "the environment has no pip of its own, so the host's pip (python from PATH) installs into it with --python (pip 22.3 or newer)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "env")
			tw := &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip\n"}
			spec := pyenvtest.Spec{Torch: tw}
			must(t, pyenvtest.Write(root, spec))
			// pip is looked for by the read: in place before it
			pip := filepath.Join(pyenvtest.SitePackages(root, spec), "pip")
			if tt.pip {
				must(t, os.MkdirAll(pip, 0o755))
			} else {
				must(t, os.RemoveAll(pip))
			}
			env, err := pyenv.Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			py := `C:\Users\me\proj\.venv\Scripts\python.exe`
			got := managers.ReinstallCommand(env.Torch(), managers.ReinstallRequest{
				Env: env, Python: py, Specs: specs, Index: index, LookPath: found(tt.onPath), Launchers: managers.WindowsLaunchers,
			})
			head := slices.Clone(tt.wantHead)
			for i, a := range head {
				if a == "PY" {
					head[i] = py
				}
			}
			if got.Manager != "pip" || len(got.Argv) < len(head) || !slices.Equal(got.Argv[:len(head)], head) {
				t.Fatalf("Argv = %q, want it to start %q", got.Argv, head)
			}
			if slices.Contains(got.Argv, "python3") || slices.ContainsFunc(got.Argv, func(a string) bool { return filepath.Base(a) == "python3.exe" }) {
				t.Errorf("Argv uses python3: %q", got.Argv)
			}
			if !slices.Equal(got.Reasons, []string{tt.wantWhy}) {
				t.Errorf("Reasons = %q, want [%q]", got.Reasons, tt.wantWhy)
			}
		})
	}
}
