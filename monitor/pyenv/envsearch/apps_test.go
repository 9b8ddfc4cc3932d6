package envsearch_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestAppsDiscovered builds each app's layout as the app builds it,
// under a home, and finds and names each environment.
func TestAppsDiscovered(t *testing.T) {
	for _, layout := range []pyenv.Layout{pyenv.LayoutPOSIX, pyenv.LayoutWindows} {
		t.Run(string(layout), func(t *testing.T) { appsDiscovered(t, layout) })
	}
}

// appsDiscovered: each app in the layout (the embedded Pythons are
// Windows' whatever it is).
func appsDiscovered(t *testing.T, win pyenv.Layout) {
	home := t.TempDir()
	torch := func() *pyenvtest.Torch { return cuda128() }
	type build func() (string, error)
	cases := []struct {
		app   string
		build build
	}{
		{"ComfyUI portable", func() (string, error) {
			return pyenvtest.ComfyUIPortable(filepath.Join(home, "Desktop", "ComfyUI_windows_portable"), pyenvtest.Spec{Python: "3.12", Torch: torch()})
		}},
		{"Fooocus", func() (string, error) {
			return pyenvtest.Fooocus(filepath.Join(home, "Downloads", "Fooocus_win64_2-5-0"), pyenvtest.Spec{Python: "3.10", Torch: torch()})
		}},
		{"Forge (one-click package)", func() (string, error) {
			return pyenvtest.WebUIPackage(filepath.Join(home, "webui_forge_cu121_torch231"), true, pyenvtest.Spec{Python: "3.10", Torch: torch()})
		}},
		{"AUTOMATIC1111 (one-click package)", func() (string, error) {
			return pyenvtest.WebUIPackage(filepath.Join(home, "sd.webui"), false, pyenvtest.Spec{Python: "3.10", Torch: torch()})
		}},
		{"AUTOMATIC1111", func() (string, error) {
			return pyenvtest.WebUI(filepath.Join(home, "stable-diffusion-webui"), false, pyenvtest.Spec{Layout: win, Python: "3.10", Torch: torch()})
		}},
		{"Forge", func() (string, error) {
			return pyenvtest.WebUI(filepath.Join(home, "Documents", "stable-diffusion-webui-forge"), true, pyenvtest.Spec{Layout: win, Python: "3.10", Torch: torch()})
		}},
		{"Stability Matrix (ComfyUI)", func() (string, error) {
			return pyenvtest.StabilityMatrix(filepath.Join(home, "StabilityMatrix", "Data"), "ComfyUI", true, pyenvtest.Spec{Layout: win, Python: "3.10", Torch: torch()})
		}},
		{"Pinokio (comfy.git)", func() (string, error) {
			return pyenvtest.Pinokio(filepath.Join(home, "pinokio"), "comfy.git", pyenvtest.Spec{Layout: win, Python: "3.10", Torch: torch()})
		}},
		{"InvokeAI", func() (string, error) {
			return pyenvtest.InvokeAI(filepath.Join(home, "invokeai"), pyenvtest.Spec{Layout: win, Python: "3.11", Torch: torch()})
		}},
		{"text-generation-webui", func() (string, error) {
			return pyenvtest.TextGenWebUI(filepath.Join(home, "text-generation-webui"), pyenvtest.Spec{Layout: win, Python: "3.11", Torch: torch()})
		}},
		{"pixi (default)", func() (string, error) {
			return pyenvtest.Pixi(filepath.Join(home, "code", "ml"), "default", pyenvtest.Spec{Layout: win, Python: "3.12", Torch: torch()})
		}},
	}
	want := map[string]string{}
	for _, c := range cases {
		p, err := c.build()
		must(t, err)
		want[p] = c.app
	}
	d := envsearch.Search(context.Background(), envsearch.Options{Home: home, Cwd: t.TempDir(), System: []string{},
		Getenv: func(string) string { return "" }})
	if !d.Complete {
		t.Fatalf("search stopped: %s", d.Stopped)
	}
	found := map[string]bool{}
	for _, f := range d.Found {
		found[f.Path] = true
	}
	for p, app := range want {
		if !found[p] {
			t.Errorf("%s: %s not found", app, p)
			continue
		}
		env, err := pyenv.Inspect(p)
		if err != nil {
			t.Errorf("%s: %v", app, err)
			continue
		}
		if env.App != app {
			t.Errorf("%s: app = %q", p, env.App)
		}
		if tp := env.Torch(); tp == nil || tp.Version != "2.7.0+cu128" {
			t.Errorf("%s: torch = %+v", app, tp)
		}
	}
}

// TestStabilityMatrixLibrary: Stability Matrix's library is wherever
// library.json says, outside home too.
func TestStabilityMatrixLibrary(t *testing.T) {
	home, lib := t.TempDir(), filepath.Join(t.TempDir(), "SM Library")
	p, err := pyenvtest.StabilityMatrix(lib, "stable-diffusion-webui-forge", false, pyenvtest.Spec{Python: "3.10", Torch: cuda128()})
	must(t, err)
	cfg := filepath.Join(home, ".config", "StabilityMatrix")
	must(t, os.MkdirAll(cfg, 0o755))
	must(t, os.WriteFile(filepath.Join(cfg, "library.json"), []byte(`{"LibraryPath": "`+filepath.ToSlash(lib)+`"}`), 0o644))
	d := envsearch.Search(context.Background(), envsearch.Options{Home: home, Cwd: t.TempDir(), System: []string{},
		Getenv: func(string) string { return "" }})
	i := slices.IndexFunc(d.Found, func(f envsearch.Found) bool { return f.Path == p })
	if i < 0 {
		t.Fatalf("%s not found in %+v", p, d.Found)
	}
	if f := d.Found[i]; f.Via != "apps" || !strings.Contains(f.From, "library.json LibraryPath") {
		t.Errorf("found = %+v", f)
	}
	if app := pyenv.AppOf(p); app != "Stability Matrix (stable-diffusion-webui-forge)" {
		t.Errorf("app = %q", app)
	}
}
