package envsearch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// bigHome builds a home with a deep monorepo venv and a dataset of files
// files (an ImageNet-like tree: class folders of JPEGs) plus a flat
// folder of shards, and returns the home and the deep venv.
func bigHome(t testing.TB, files int) (home, deep string) {
	home = t.TempDir()
	deep = filepath.Join(home, "src", "github.com", "org", "repo", "services", "x", ".venv")
	must(t, pyenvtest.Write(deep, pyenvtest.Spec{Manager: "uv"}))
	for _, p := range []string{"src/github.com/org/repo/pyproject.toml", "src/github.com/org/repo/services/x/pyproject.toml"} {
		writeFile(t, home, p, "[project]\nname = \"x\"\n")
	}
	must(t, os.MkdirAll(filepath.Join(home, "src", "github.com", "org", "repo", ".git", "objects"), 0o755))
	classes := files / 2 / 500
	for c := range classes {
		dir := filepath.Join(home, "data", "imagenet", "train", fmt.Sprintf("n%08d", c))
		must(t, os.MkdirAll(dir, 0o755))
		for i := range 500 {
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("n%08d_%d.JPEG", c, i)))
			must(t, err)
			f.Close()
		}
	}
	shards := filepath.Join(home, "data", "shards")
	must(t, os.MkdirAll(shards, 0o755))
	for i := range files - classes*500 {
		f, err := os.Create(filepath.Join(shards, fmt.Sprintf("shard-%06d.npy", i)))
		must(t, err)
		f.Close()
	}
	return home, deep
}

// TestWalkFindsWhatMattersFirst: a venv deep in a monorepo is found in a
// home that also holds a 200,000-file dataset (20,000 with -short),
// without the search running out of its entry budget on the data.
func TestWalkFindsWhatMattersFirst(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 20_000
	}
	home, deep := bigHome(t, n)
	d := envsearch.Search(context.Background(), envsearch.Options{Home: home, Cwd: t.TempDir(), System: []string{},
		Getenv: func(string) string { return "" }, Timeout: 1 << 40})
	if !d.Complete || d.Stopped != "" {
		t.Errorf("search incomplete: %s", d.Stopped)
	}
	if got := paths(d.Found); got[deep] != "home" {
		t.Errorf("Search found %v, want %s via home", got, deep)
	}
}

// TestWalkContent: what a folder holds decides whether the walk enters
// it, and a symbolic link is followed only to an environment.
func TestWalkContent(t *testing.T) {
	home := t.TempDir()
	venv := func(rel string) string {
		p := filepath.Join(home, rel)
		must(t, pyenvtest.Write(p, pyenvtest.Spec{}))
		return p
	}
	keep := venv("work/proj/.venv")
	venv("tagged-cache/x/.venv")
	writeFile(t, home, "tagged-cache/CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag.\n")
	venv("profile/extensions/.venv")
	writeFile(t, home, "profile/prefs.js", "user_pref(\"x\", 1);\n")
	writeFile(t, home, "profile/times.json", "{}\n")
	venv("bare.git/hooks/.venv")
	writeFile(t, home, "bare.git/HEAD", "ref: refs/heads/main\n")
	must(t, os.MkdirAll(filepath.Join(home, "bare.git", "objects"), 0o755))
	must(t, os.MkdirAll(filepath.Join(home, "bare.git", "refs"), 0o755))
	venv("AppData/Local/Temp/pip-build-env/.venv")
	outside := t.TempDir()
	linked := filepath.Join(outside, "env-elsewhere")
	must(t, pyenvtest.Write(linked, pyenvtest.Spec{}))
	must(t, pyenvtest.Write(filepath.Join(outside, "tree", "hidden", ".venv"), pyenvtest.Spec{}))
	must(t, os.Symlink(linked, filepath.Join(home, "my-env")))                       // a link to an environment: found
	must(t, os.Symlink(filepath.Join(outside, "tree"), filepath.Join(home, "tree"))) // a link into a tree: not entered
	must(t, os.Symlink("/", filepath.Join(home, "root")))                            // never walk the machine

	d := envsearch.Search(context.Background(), envsearch.Options{Home: home, Cwd: t.TempDir(), System: []string{},
		Getenv: func(string) string { return "" }})
	want := map[string]string{keep: "home", filepath.Join(home, "my-env"): "home"}
	if got := paths(d.Found); !mapsEqual(got, want) {
		t.Errorf("Search found\n%v\nwant\n%v", got, want)
	}
	if !d.Complete {
		t.Errorf("incomplete: %s", d.Stopped)
	}
}

// TestSearchCutShort: when a budget ends the search it says so and where,
// and still reads the environments earlier searches found.
func TestSearchCutShort(t *testing.T) {
	home := t.TempDir()
	for i := range 30 {
		must(t, os.MkdirAll(filepath.Join(home, fmt.Sprintf("d%02d", i), "sub"), 0o755))
	}
	late := filepath.Join(home, "zz", "deep", "er", "proj", ".venv")
	must(t, pyenvtest.Write(late, pyenvtest.Spec{}))
	gone := filepath.Join(home, "gone")
	o := envsearch.Options{Home: home, Cwd: t.TempDir(), System: []string{}, Getenv: func(string) string { return "" },
		MaxEntries: 20, Remembered: []string{late, gone}}
	d := envsearch.Search(context.Background(), o)
	if d.Complete || !strings.Contains(d.Stopped, "budget of 20 entries") || !strings.Contains(d.Stopped, home) {
		t.Errorf("Complete %v, Stopped %q", d.Complete, d.Stopped)
	}
	if got := paths(d.Found); got[late] != "remembered" || got[gone] != "" {
		t.Errorf("Search found %v: want %s remembered, and nothing gone", got, late)
	}
	// a complete search does not need what was remembered
	o.MaxEntries = 0
	if d := envsearch.Search(context.Background(), o); !d.Complete || paths(d.Found)[late] != "home" {
		t.Errorf("complete search: %+v", d)
	}
}

// BenchmarkDiscoverDatasetHome: discovery of a home with a deep
// monorepo venv and a 200,000-file dataset. Goal: well under the 2 s
// time budget (DefaultTimeout).
func BenchmarkDiscoverDatasetHome(b *testing.B) {
	home, deep := bigHome(b, 200_000)
	o := envsearch.Options{Home: home, Cwd: home, System: []string{}, Getenv: func(string) string { return "" }}
	for b.Loop() {
		d := envsearch.Search(context.Background(), o)
		if paths(d.Found)[deep] == "" || !d.Complete {
			b.Fatalf("found %v, complete %v (%s)", d.Found, d.Complete, d.Stopped)
		}
	}
}
