//go:build !windows

package health

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestEnvironmentProblemsAreNotTorchs: what is wrong with the
// environment rather than with torch (a pyvenv.cfg that is a FIFO, a
// folder or too large, a .pth file that is a FIFO, no site-packages, a
// stash pip left of a package not installed) is ENV_UNREADABLE, never
// TORCH_INSTALL_BROKEN, whose fix, a reinstall of torch, leaves it as it
// is; none is offered a reinstall, and none leaves the environment
// without a warning or an error. A stash of torch's own, beside the
// torch it belongs to, stays torch's: the reinstall removes it.
func TestEnvironmentProblemsAreNotTorchs(t *testing.T) {
	cuda := &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip"}
	replaceCfg := func(root string) string {
		cfg := filepath.Join(root, "pyvenv.cfg")
		mustDo(t, os.Remove(cfg))
		return cfg
	}
	for _, tc := range []struct {
		name   string
		damage func(root, site string) error
		sev    finding.Severity
		says   string // in the message, with the path where {path}
		path   func(root, site string) string
	}{
		{"pyvenv.cfg is a FIFO", func(root, _ string) error { return syscall.Mkfifo(replaceCfg(root), 0o644) },
			finding.SeverityError, "{path} is a FIFO, not a regular file: GPU Canary did not read it", cfgPath},
		{"pyvenv.cfg is a folder", func(root, _ string) error { return os.Mkdir(replaceCfg(root), 0o755) },
			finding.SeverityError, "{path} is a folder, not a regular file: GPU Canary did not read it", cfgPath},
		{"pyvenv.cfg is too large to read", func(root, _ string) error {
			return os.WriteFile(filepath.Join(root, "pyvenv.cfg"), []byte(strings.Repeat("# padding\n", 100<<10)), 0o644)
		}, finding.SeverityError, "cannot read pyvenv.cfg: reading {path}: file larger than the read limit", cfgPath},
		{"a .pth file is a FIFO", func(_, site string) error { return syscall.Mkfifo(filepath.Join(site, "hook.pth"), 0o644) },
			finding.SeverityError, "{path} is a FIFO, not a regular file: GPU Canary did not read it", func(_, site string) string { return filepath.Join(site, "hook.pth") }},
		{"no site-packages folder", func(root, _ string) error { return os.RemoveAll(filepath.Join(root, "lib")) },
			finding.SeverityWarning, "no site-packages folder", func(root, _ string) string { return root }},
		{"a stash of a package not installed", func(_, site string) error { return os.Mkdir(filepath.Join(site, "~umpy"), 0o755) },
			finding.SeverityWarning, "pip left ~umpy behind after an interrupted uninstall", func(_, site string) string { return filepath.Join(site, "~umpy") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "env")
			site := filepath.Join(root, "lib", "python3.11", "site-packages")
			mustDo(t, pyenvtest.Write(root, pyenvtest.Spec{Torch: cuda}))
			mustDo(t, tc.damage(root, site))
			env, err := pyenv.Inspect(root)
			mustDo(t, err)
			fs := CheckEnv(env, a100Driver550, Options{})
			path := tc.path(root, site)
			says := strings.ReplaceAll(tc.says, "{path}", path)
			var found bool
			for _, f := range fs {
				if f.Code == finding.CodeTorchInstallBroken || finding.FixedByReinstall(f.Code) {
					t.Errorf("a reinstall of torch is proposed for it:\n%s", dump(fs))
				}
				if f.Code == finding.CodeEnvUnreadable && f.Severity == tc.sev && strings.Contains(f.Message, says) && f.Fix == "" &&
					len(f.Evidence) == 1 && f.Evidence[0].File == path {
					found = true
				}
			}
			if !found {
				t.Errorf("no ENV_UNREADABLE %s naming %s saying %q:\n%s", tc.sev, path, says, dump(fs))
			}
		})
	}

	t.Run("a stash of torch's own beside torch", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "env")
		site := filepath.Join(root, "lib", "python3.11", "site-packages")
		mustDo(t, pyenvtest.Write(root, pyenvtest.Spec{Torch: cuda}))
		mustDo(t, os.Mkdir(filepath.Join(site, "~orch"), 0o755))
		env, err := pyenv.Inspect(root)
		mustDo(t, err)
		fs := CheckEnv(env, a100Driver550, Options{})
		if len(fs) != 1 || fs[0].Code != finding.CodeTorchInstallBroken || fs[0].Severity != finding.SeverityWarning || !strings.Contains(fs[0].Message, "torch: pip left ~orch behind") {
			t.Errorf("findings:\n%s", dump(fs))
		}
	})
}

func cfgPath(root, _ string) string { return filepath.Join(root, "pyvenv.cfg") }
