//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// managerVars point environment managers at the developer's own
// environments (pyenv's versions, an active conda or venv); the tray
// under test finds them there, and the screenshots would show this
// machine's environments instead of the test's.
var managerVars = []string{"PYENV_ROOT", "PYENV_VERSION", "CONDA_PREFIX", "CONDA_EXE", "CONDARC", "MAMBA_ROOT_PREFIX",
	"VIRTUAL_ENV", "WORKON_HOME", "PYTHONUSERBASE", "PIPX_HOME", "HATCH_CONFIG", "HATCH_DATA_DIR", "INVOKEAI_ROOT",
	"JUPYTER_DATA_DIR", "JUPYTER_PATH", "PDM_CONFIG_FILE", "POETRY_CACHE_DIR", "POETRY_CONFIG_DIR", "POETRY_VIRTUALENVS_PATH",
	"STABILITY_MATRIX_APPDATAHOME", "UV_PROJECT_ENVIRONMENT"}

// testEnviron is os.Environ without managerVars: the gpucanary under
// test sees the test's home and nothing of the machine's managers.
func testEnviron() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, m := range managerVars {
			drop = drop || k == m
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// homeEnviron is testEnviron with home as the home folder, its settings
// and state folders under it, a UTF-8 locale, and more.
func homeEnviron(home string, more ...string) []string {
	return append(append(testEnviron(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"), "LANG=C.UTF-8", "LC_ALL=C.UTF-8"), more...)
}

// desktopBin is the gpucanary under test, on the display and session
// bus scripts/e2e-desktop.sh starts; the test fails without them. A
// test that needs no bus asks displayBin.
func desktopBin(t *testing.T) string {
	t.Helper()
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		t.Fatal("run through scripts/e2e-desktop.sh: GPUCANARY_BIN, DISPLAY and a session bus are needed")
	}
	return displayBin(t)
}

// displayBin is the gpucanary under test, on the display
// scripts/e2e-desktop.sh starts.
func displayBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("GPUCANARY_BIN")
	if bin == "" || os.Getenv("DISPLAY") == "" {
		t.Fatal("run through scripts/e2e-desktop.sh: GPUCANARY_BIN and DISPLAY are needed")
	}
	return bin
}
