package pyenv_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// hostPython is Debian's /usr/bin/python3, else the python3 on PATH.
func hostPython(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to compare with")
	}
	return py
}

// TestPthOrderMatchesPython: for real venvs with .pth files (comments,
// blank lines, an import line, relative and absolute paths, a missing
// folder, a duplicate, a file, CRLF line ends, a .pth in a folder a .pth
// added, one in the user site, a line naming a later site), GPU Canary's
// import path is the folders of what the venv's own Python prints as
// sys.path, in its order, and torch is read from where Python finds it.
func TestPthOrderMatchesPython(t *testing.T) {
	py := hostPython(t)
	for _, system := range []bool{false, true} {
		t.Run(fmt.Sprintf("system-site-packages=%v", system), func(t *testing.T) {
			dir := t.TempDir()
			home := filepath.Join(dir, "home")
			venv := filepath.Join(dir, "venv")
			args := []string{"-m", "venv", "--without-pip", venv}
			if system {
				args = append(args, "--system-site-packages")
			}
			if out, err := exec.Command(py, args...).CombinedOutput(); err != nil {
				t.Skipf("%s -m venv: %v\n%s", py, err, out)
			}
			sites, _ := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
			if len(sites) != 1 {
				t.Fatalf("site-packages of %s: %v", venv, sites)
			}
			site := sites[0]
			for _, d := range []string{"a", "b", "c", "u", "never"} {
				must(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
			}
			a, b, c, u := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c"), filepath.Join(dir, "u")
			writeFile(t, dir, "file", "not a folder")
			writeFile(t, site, "10-first.pth", "# a comment\n\n"+a+"\nimport sys\n../../../../b\n"+filepath.Join(dir, "missing")+"\n"+a+"/\n"+filepath.Join(dir, "file")+"\n")
			writeFile(t, site, "20-second.pth", c+"\r\n/usr/lib/python3/dist-packages\r\n"+b+"\r\n")
			writeFile(t, a, "inner.pth", filepath.Join(dir, "never")+"\n")
			userSite := filepath.Join(home, ".local", "lib", filepath.Base(filepath.Dir(site)), "site-packages")
			writeFile(t, userSite, "user.pth", u+"\n"+a+"\n")

			want, origin := pythonImportPath(t, venv, home, dir)
			i := slices.Index(want, site)
			if i < 0 {
				t.Fatalf("%s not on sys.path %v", site, want)
			}
			want = want[i:]

			env, err := pyenv.InspectWith(venv, noUser(home))
			must(t, err)
			var have []string
			for _, s := range env.Sites {
				if s.From != pyenv.SiteEditable {
					have = append(have, s.Path)
				}
			}
			if !slices.Equal(have, want) {
				t.Errorf("GPU Canary's import path:\n  %s\nPython's sys.path (folders, from the venv's site on):\n  %s",
					strings.Join(have, "\n  "), strings.Join(want, "\n  "))
			}
			checkOrigin(t, env, origin)
		})
	}
}

// pythonImportPath runs the venv's own Python with HOME home in dir and
// returns the folders on its sys.path that site added (the standard
// library's, which `python -S` lists too, and files left out), in order,
// each once (a venv's .pth import lines run twice, and import looks in
// a folder's first place only), and where import finds torch ("" when
// it does not).
func pythonImportPath(t *testing.T, venv, home, dir string) ([]string, string) {
	t.Helper()
	run := func(args ...string) []any {
		cmd := exec.Command(filepath.Join(venv, "bin", "python"), args...)
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the venv's python %v: %v", args, err)
		}
		var got []any
		must(t, json.Unmarshal(out, &got))
		return got
	}
	var stdlib []string
	for _, p := range run("-S", "-c", "import sys, json; print(json.dumps([sys.path]))")[0].([]any) {
		stdlib = append(stdlib, p.(string))
	}
	got := run("-c", "import sys, json, importlib.util as u; s = u.find_spec('torch'); print(json.dumps([sys.path, s.origin if s else '']))")
	var folders []string
	for _, p := range got[0].([]any) {
		if p := p.(string); !slices.Contains(stdlib, p) && !slices.Contains(folders, p) && isDir(p) { // GPU Canary reads folders; Python lists a file too
			folders = append(folders, p)
		}
	}
	return folders, got[1].(string)
}

// checkOrigin fails t unless GPU Canary read torch where Python finds it
// (origin, "" for nowhere).
func checkOrigin(t *testing.T, env *pyenv.Env, origin string) {
	t.Helper()
	switch tor := env.Torch(); {
	case origin == "" && tor != nil:
		t.Errorf("Python finds no torch; GPU Canary read one from %s", tor.Site)
	case origin != "" && (tor == nil || filepath.Join(tor.Site, "torch", "__init__.py") != origin):
		t.Errorf("Python finds torch at %s; GPU Canary read %+v", origin, tor)
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
