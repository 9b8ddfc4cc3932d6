package wheeltest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Python finds a python3 whose pip can install into another environment
// (pip --python, pip 22.3 or newer). Without one the test is skipped with
// the reason: `make test` installs python3-pip, so CI always has one.
func Python(t testing.TB) string {
	t.Helper()
	py := findPython()
	if py == "" {
		t.Skip("no python3 with venv and pip >= 22.3 (make deps-test installs python3-venv and python3-pip)")
	}
	return py
}

// findPython asks each candidate once per test binary (each ask starts an
// interpreter), and returns its sys.executable, not the name on PATH: a
// pyenv shim there is a script that runs `pyenv rehash` after each pip
// install, and tests installing in parallel then collide on its lock (pip
// "fails" with "pyenv: cannot rehash").
var findPython = sync.OnceValue(func() string {
	for _, cand := range []string{os.Getenv("GPUCANARY_TEST_PYTHON"), "python3", "/usr/bin/python3"} {
		if cand == "" {
			continue
		}
		path, err := exec.LookPath(cand)
		if err != nil {
			continue
		}
		out, err := exec.Command(path, "-c", "import pip, sys, venv; v = tuple(int(x) for x in pip.__version__.split('.')[:2]); print(v >= (22, 3), sys.executable)").Output()
		if ok, exe, _ := strings.Cut(strings.TrimSpace(string(out)), " "); err == nil && ok == "True" && exe != "" {
			return exe
		}
	}
	return ""
})

// NewVenv makes a real venv without pip (as the engine tests' environments
// are: the host pip installs into them with --python).
func NewVenv(t testing.TB, python, dir string) {
	t.Helper()
	if out, err := exec.Command(python, "-m", "venv", "--without-pip", dir).CombinedOutput(); err != nil {
		t.Fatalf("python3 -m venv %s: %v\n%s", dir, err, out)
	}
}

// Pip runs the host pip against the venv: python3 -m pip --python VENV/bin/python ARGS.
func Pip(t testing.TB, python, venv string, args ...string) {
	t.Helper()
	if out, err := PipCommand(python, venv, args...).CombinedOutput(); err != nil {
		t.Fatalf("pip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// PipCommand is the command Pip runs, for tests that start it themselves.
func PipCommand(python, venv string, args ...string) *exec.Cmd {
	full := append([]string{"-m", "pip", "--python", filepath.Join(venv, "bin", "python"), "--disable-pip-version-check", "--no-input", "-q"}, args...)
	cmd := exec.Command(python, full...)
	cmd.Env = append(os.Environ(), "PIP_NO_CACHE_DIR=1", "PIP_CONFIG_FILE=/dev/null")
	return cmd
}

// SitePackages is the venv's site-packages folder.
func SitePackages(t testing.TB, venv string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
	if len(m) != 1 {
		t.Fatalf("site-packages of %s: %v", venv, m)
	}
	return m[0]
}

// UV is a uv for tests: the real one when it is on PATH, else a stand-in
// written into dir. uv cannot be installed on the machines the tests run
// on (PyPI is not reachable), so the stand-in accepts only the commands a
// repair plan builds for a uv environment,
//
//	uv pip install --python ENV [--reinstall] [--no-deps] SPEC... --index-url URL
//
// and carries them out with real pip (--reinstall as --force-reinstall,
// the same pins, dependencies and index), refusing anything else: the
// plan's pins, flags and index are what gets tested, not uv.
func UV(t testing.TB, python, dir string) string {
	t.Helper()
	if path, err := exec.LookPath("uv"); err == nil {
		return path
	}
	script := `#!/bin/sh
# Stand-in for uv (see wheeltest.UV): only the repair plan's install.
if [ "$1" != pip ] || [ "$2" != install ] || [ "$3" != --python ]; then
	echo "uv stand-in: not a command it carries out: $*" >&2
	exit 2
fi
env="$4"
shift 4
for a in "$@"; do
	case "$a" in
	--reinstall) a=--force-reinstall ;;
	--no-deps | --index-url) ;;
	-*)
		echo "uv stand-in: not a flag it carries out: $a" >&2
		exit 2
		;;
	esac
	set -- "$@" "$a"
	shift
done
exec "` + python + `" -m pip --python "$env/bin/python" --disable-pip-version-check --no-input install "$@"
`
	path := filepath.Join(dir, "uv")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
