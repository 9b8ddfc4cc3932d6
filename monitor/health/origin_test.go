package health

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

func inspectAs(t *testing.T, root, home string) *pyenv.Env {
	t.Helper()
	env, err := pyenv.InspectWith(root, pyenv.InspectOptions{Home: home, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// TestImportPathCode: an import line that changes sys.path by code GPU
// Canary does not follow makes torch's verdict a warning naming the
// file and line; import lines that leave sys.path alone say nothing.
func TestImportPathCode(t *testing.T) {
	for _, tt := range []struct {
		name, pth string
		warn      bool
	}{
		{"sys.path from a variable", "import sys, os; sys.path.insert(0, os.environ['TORCH_SITE'])\n", true},
		{"site.addsitedir", "# shared\nimport site; site.addsitedir('/opt/shared')\n", true},
		{"virtualenv's hook", "import _virtualenv\n", false},
		{"a literal folder GPU Canary follows", "import sys; sys.path.append('/nowhere')\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "venv")
			if err := pyenvtest.Write(root, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1"}}); err != nil {
				t.Fatal(err)
			}
			pth := filepath.Join(root, "lib", "python3.11", "site-packages", "hook.pth")
			if err := os.WriteFile(pth, []byte(tt.pth), 0o644); err != nil {
				t.Fatal(err)
			}
			fs := CheckEnv(inspectAs(t, root, t.TempDir()), a100Driver550, Options{})
			var got *Finding
			for i := range fs {
				if fs[i].Code == CodeImportPathCode {
					got = &fs[i]
				}
			}
			switch {
			case !tt.warn && len(fs) > 0:
				t.Errorf("findings for a line that leaves sys.path alone: %s", dump(fs))
			case tt.warn && (got == nil || got.Severity != SeverityWarning):
				t.Errorf("no %s warning: %s", CodeImportPathCode, dump(fs))
			case tt.warn && (!strings.Contains(got.Message, pth+": line ") || !strings.Contains(got.Message, "bin/python -c 'import torch; print(torch.__file__, torch.__version__)'")):
				t.Errorf("message does not name the file and line or the check: %s", got.Message)
			}
		})
	}
}
