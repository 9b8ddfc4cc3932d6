package pyenv_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// cuda128 is torch 2.7.0+cu128 for Windows: the CUDA DLLs inside
// torch\lib, as its wheel ships them.
func cuda128() *pyenvtest.Torch {
	return &pyenvtest.Torch{DistVersion: "2.7.0+cu128", CUDA: "12.8", Installer: "pip"}
}

// TestEmbeddedComfyUIPortable reads ComfyUI's portable release as it is
// unpacked: an embedded Python 3.12 whose python312._pth defines the
// import path.
func TestEmbeddedComfyUIPortable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ComfyUI_windows_portable")
	envPath, err := pyenvtest.ComfyUIPortable(dir, pyenvtest.Spec{Python: "3.12", Torch: cuda128()})
	must(t, err)
	if !pyenv.IsEnv(envPath) {
		t.Fatal("IsEnv: python_embeded is not an environment")
	}
	env, err := pyenv.InspectWith(envPath, pyenv.InspectOptions{Home: t.TempDir(), Getenv: func(string) string { return "" }})
	must(t, err)
	if env.Kind != pyenv.KindEmbedded || env.Layout != pyenv.LayoutWindows || env.Python != "3.12" || env.Installer != "embedded" {
		t.Errorf("kind, layout, python, installer = %s %s %s %s", env.Kind, env.Layout, env.Python, env.Installer)
	}
	if env.App != "ComfyUI portable" {
		t.Errorf("app = %q", env.App)
	}
	tp := env.Torch()
	if tp == nil || tp.Version != "2.7.0+cu128" || tp.Build != pyenv.BuildCUDA || tp.CUDA != "12.8" {
		t.Fatalf("torch = %+v", tp)
	}
	site := filepath.Join(envPath, "Lib", "site-packages")
	if tp.Site != site || env.SitePackages != site {
		t.Errorf("torch read from %s, site-packages %s; want %s", tp.Site, env.SitePackages, site)
	}
	// sys.path: ../ComfyUI (line 1), . (line 3), then site's Lib\site-packages
	var got []string
	for _, s := range env.Sites {
		got = append(got, s.From+" "+s.Path)
	}
	want := []string{"pth " + filepath.Join(dir, "ComfyUI"), "pth " + envPath, "own " + site}
	if !slices.Equal(got, want) {
		t.Errorf("sites =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if interp := env.Interpreter(); interp != filepath.Join(envPath, "python.exe") {
		t.Errorf("interpreter = %s", interp)
	}
}

// TestEmbeddedPth: the ._pth file decides what is importable; without
// `import site` Lib\site-packages is not on the path (nor a user site:
// a ._pth file makes the interpreter isolated), and without a ._pth
// file the interpreter starts as any Windows installation, user site
// first.
func TestEmbeddedPth(t *testing.T) {
	cases := []struct {
		name      string
		pth       string // "" removes the file
		wantTorch bool
		wantUser  bool
	}{
		{"import site", pyenvtest.EmbeddedPth("3.12", "", true), true, false},
		{"no import site", pyenvtest.EmbeddedPth("3.12", "", false), false, false},
		{"site-packages listed", "python312.zip\n.\nLib\\site-packages\n", true, false},
		{"no _pth", "", true, true},
		// CPython reads a ._pth whole, whatever its size: a file of
		// over 1 MB is read (issue 42, item 14), and a line longer than
		// any Windows path names no folder and is skipped.
		{"over 1 MB", strings.Repeat("# a comment line that pads the file out\n", 30000) + "python312.zip\n.\nimport site\n", true, false},
		{"a line longer than any path", "python312.zip\n" + strings.Repeat("x", 200000) + "\n.\nimport site\n", true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			appdata := filepath.Join(home, "AppData", "Roaming")
			user, err := pyenvtest.UserSite(home, pyenvtest.Spec{Python: "3.12"})
			must(t, err)
			winUser := filepath.Join(appdata, "Python", "Python312", "site-packages")
			must(t, os.MkdirAll(filepath.Dir(winUser), 0o755))
			must(t, os.Rename(user, winUser))
			envPath := filepath.Join(t.TempDir(), "python_embeded")
			must(t, pyenvtest.Write(envPath, pyenvtest.Spec{Manager: "embedded", Python: "3.12", Torch: cuda128()}))
			pth := filepath.Join(envPath, "python312._pth")
			if c.pth == "" {
				must(t, os.Remove(pth))
			} else {
				must(t, os.WriteFile(pth, []byte(c.pth), 0o644))
			}
			env, err := pyenv.InspectWith(envPath, pyenv.InspectOptions{Home: home, Getenv: func(k string) string {
				if k == "APPDATA" {
					return appdata
				}
				return ""
			}})
			must(t, err)
			if env.Kind != pyenv.KindEmbedded {
				t.Fatalf("kind = %s", env.Kind)
			}
			if len(env.Problems) != 0 {
				t.Errorf("problems: %+v", env.Problems)
			}
			if (env.Torch() != nil) != c.wantTorch {
				t.Errorf("torch read = %v, want %v (sites %+v)", env.Torch() != nil, c.wantTorch, env.Sites)
			}
			if tp := env.Torch(); tp != nil {
				if _, says, borrowed := env.Origin(tp); borrowed || tp.Site != env.SitePackages {
					t.Errorf("torch read from %s (%s), want the environment's own %s", tp.Site, says, env.SitePackages)
				}
			}
			onPath := slices.ContainsFunc(env.Sites, func(s pyenv.Site) bool { return s.From == pyenv.SiteUser })
			if onPath != c.wantUser {
				t.Errorf("user site on the path = %v, want %v", onPath, c.wantUser)
			}
		})
	}
}

// TestAppOf: a folder named like an app's environment is no app's
// without the app's files beside it.
func TestAppOf(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "proj", "venv")
	must(t, pyenvtest.Write(plain, pyenvtest.Spec{}))
	sm := filepath.Join(dir, "lib", "Packages", "x", "venv")
	must(t, pyenvtest.Write(sm, pyenvtest.Spec{}))
	emb := filepath.Join(dir, "other", "python_embeded")
	must(t, pyenvtest.Write(emb, pyenvtest.Spec{Manager: "embedded", Python: "3.12"}))
	for _, p := range []string{plain, sm, emb, "/", "venv", `C:\venv`} {
		if got := pyenv.AppOf(p); got != "" {
			t.Errorf("AppOf(%s) = %q, want none", p, got)
		}
	}
	env, err := pyenv.Inspect(emb)
	must(t, err)
	if env.Kind != pyenv.KindEmbedded || env.App != "" {
		t.Errorf("an unknown app's embedded Python: kind %s, app %q", env.Kind, env.App)
	}
}
