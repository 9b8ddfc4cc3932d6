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

// homeTree builds a home directory with environments where people keep
// them, and the things a walk must not enter.
func homeTree(t testing.TB) string {
	home := t.TempDir()
	venv := func(rel string) {
		must(t, pyenvtest.Write(filepath.Join(home, rel), pyenvtest.Spec{Manager: "uv"}))
	}
	conda := func(rel string) {
		must(t, pyenvtest.Write(filepath.Join(home, rel), pyenvtest.Spec{Manager: "conda"}))
	}
	venv("proj/.venv")
	venv("proj/.venv-gpu")
	venv("proj/.venv310")
	venv("work/a/b/.venv")                                                             // nested project
	venv("node_modules/pkg/.venv")                                                     // skipped
	venv(".git/hooks/.venv")                                                           // skipped
	venv(".cache/uv/builds-v0/x")                                                      // skipped
	venv("d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/d12/d13/.venv")                           // deeper than the default depth
	conda("miniconda3")                                                                // conda base
	conda("miniconda3/envs/ml")                                                        // conda env
	must(t, os.Symlink(home, filepath.Join(home, "loop")))                             // symlink loop
	must(t, os.Symlink(filepath.Join(home, "proj"), filepath.Join(home, "proj-link"))) // same envs again
	return home
}

func paths(fs []envsearch.Found) map[string]string {
	m := map[string]string{}
	for _, f := range fs {
		m[f.Path] = f.Via
	}
	return m
}

// discover is the environments Search finds, in its order.
func discover(ctx context.Context, o envsearch.Options) []envsearch.Found {
	return envsearch.Search(ctx, o).Found
}

func TestDiscoverHome(t *testing.T) {
	home := homeTree(t)
	o := envsearch.Options{System: []string{}, Home: home, Cwd: t.TempDir(), Getenv: func(string) string { return "" }}
	got := discover(context.Background(), o)
	want := map[string]string{
		filepath.Join(home, "proj/.venv"):         "home",
		filepath.Join(home, "proj/.venv-gpu"):     "home",
		filepath.Join(home, "proj/.venv310"):      "home",
		filepath.Join(home, "work/a/b/.venv"):     "home",
		filepath.Join(home, "miniconda3"):         "conda",
		filepath.Join(home, "miniconda3/envs/ml"): "conda",
	}
	if g := paths(got); !mapsEqual(g, want) {
		t.Errorf("Discover found\n%v\nwant\n%v", g, want)
	}
	if again := discover(context.Background(), o); !slices.Equal(again, got) {
		t.Errorf("second Discover = %v, first %v: order is not deterministic", again, got)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestDiscoverBudgets(t *testing.T) {
	home := homeTree(t)
	none := func(string) string { return "" }
	deep := filepath.Join(home, "d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/d12/d13/.venv")
	tests := []struct {
		name   string
		o      envsearch.Options
		ctx    func() context.Context
		has    []string
		hasNot []string
		cut    bool // Search says it did not look everywhere
	}{
		{name: "default depth stops before d13", o: envsearch.Options{System: []string{}}, hasNot: []string{deep}},
		{name: "a deeper walk finds it", o: envsearch.Options{System: []string{}, MaxDepth: 15}, has: []string{deep}},
		{name: "depth 1 finds only conda folders", o: envsearch.Options{System: []string{}, MaxDepth: 1},
			has: []string{filepath.Join(home, "miniconda3")}, hasNot: []string{filepath.Join(home, "proj/.venv")}},
		{name: "an entry budget of 5 stops the walk, and says so", o: envsearch.Options{System: []string{}, MaxEntries: 5},
			hasNot: []string{filepath.Join(home, "work/a/b/.venv")}, cut: true},
		{name: "a spent time budget stops the walk", o: envsearch.Options{System: []string{}},
			ctx:    func() context.Context { c, cancel := context.WithCancel(context.Background()); cancel(); return c },
			has:    []string{filepath.Join(home, "miniconda3/envs/ml")},
			hasNot: []string{filepath.Join(home, "proj/.venv")}, cut: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			o.Home, o.Cwd, o.Getenv = home, t.TempDir(), none
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx()
			}
			d := envsearch.Search(ctx, o)
			found, complete := d.Found, d.Complete
			if complete == tt.cut {
				t.Errorf("complete = %v, want %v", complete, !tt.cut)
			}
			got := paths(found)
			for _, p := range tt.has {
				if _, ok := got[p]; !ok {
					t.Errorf("missing %s in %v", p, got)
				}
			}
			for _, p := range tt.hasNot {
				if _, ok := got[p]; ok {
					t.Errorf("found %s, want it outside the budget", p)
				}
			}
		})
	}
}

func TestDiscoverSources(t *testing.T) {
	base := t.TempDir()
	mk := func(rel, manager string) string {
		p := filepath.Join(base, rel)
		must(t, pyenvtest.Write(p, pyenvtest.Spec{Manager: manager}))
		return p
	}
	active := mk("elsewhere/active", "venv")
	condaPrefix := mk("conda/envs/train", "conda")
	cwd := filepath.Join(base, "project")
	dotVenv := mk("project/.venv", "uv")
	gpuVenv := mk("project/.venv-gpu", "uv")
	rootEnv := mk("remembered/x/.venv", "venv")
	must(t, os.Symlink(dotVenv, filepath.Join(base, "alias")))
	env := map[string]string{"VIRTUAL_ENV": active, "CONDA_PREFIX": condaPrefix}

	got := discover(context.Background(), envsearch.Options{System: []string{},
		Getenv: func(k string) string { return env[k] }, Cwd: cwd, Home: filepath.Join(base, "emptyhome"),
		Roots: []string{filepath.Join(base, "remembered"), base},
	})
	want := []envsearch.Found{
		{Path: active, Via: "VIRTUAL_ENV"},
		{Path: condaPrefix, Via: "CONDA_PREFIX"},
		{Path: dotVenv, Via: "cwd", From: "./ → ./.venv (a venv in the project)"},
		{Path: gpuVenv, Via: "cwd"},
		{Path: rootEnv, Via: "root"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Discover =\n%v\nwant\n%v", got, want)
	}
	// Places names where that search looked: every environment it found
	// is in or under one of them.
	places := envsearch.Options{System: []string{}, Getenv: func(k string) string { return env[k] }, Cwd: cwd, Home: filepath.Join(base, "emptyhome"),
		Roots: []string{filepath.Join(base, "remembered")}}.Places()
	wantPlaces := []string{active, condaPrefix, cwd, filepath.Join(base, "remembered"), filepath.Join(base, "emptyhome")}
	if !slices.Equal(places, wantPlaces) {
		t.Errorf("Places =\n%v\nwant\n%v", places, wantPlaces)
	}
	for _, f := range want {
		if !slices.ContainsFunc(places, func(p string) bool { return f.Path == p || strings.HasPrefix(f.Path, p+string(filepath.Separator)) }) {
			t.Errorf("%s (found via %s) is under none of %v", f.Path, f.Via, places)
		}
	}
}

func TestDiscoverPaths(t *testing.T) {
	base := t.TempDir()
	env := filepath.Join(base, "env")
	must(t, pyenvtest.Write(env, pyenvtest.Spec{}))
	must(t, os.Symlink(env, filepath.Join(base, "link")))
	t.Chdir(base)
	got := discover(context.Background(), envsearch.Options{System: []string{},
		Paths:  []string{"env/", filepath.Join(base, "link"), "not-an-env", "./env"},
		Getenv: func(string) string { t.Error("Getenv called although paths were given"); return "" },
	})
	want := []envsearch.Found{{Path: env, Via: "argument"}, {Path: filepath.Join(base, "not-an-env"), Via: "argument"}}
	if !slices.Equal(got, want) {
		t.Errorf("Discover(paths) = %v, want %v", got, want)
	}
}

func TestIsEnv(t *testing.T) {
	base := t.TempDir()
	for _, m := range []string{"venv", "uv", "conda"} {
		p := filepath.Join(base, m)
		must(t, pyenvtest.Write(p, pyenvtest.Spec{Manager: m}))
		if !pyenv.IsEnv(p) {
			t.Errorf("IsEnv(%s env) = false", m)
		}
	}
	fake := filepath.Join(base, "fake")
	must(t, os.MkdirAll(filepath.Join(fake, "pyvenv.cfg"), 0o755)) // a directory is not a cfg
	if pyenv.IsEnv(fake) || pyenv.IsEnv(base) {
		t.Error("IsEnv true for a non-environment")
	}
}

func mkdirAll(p string) error { return os.MkdirAll(p, 0o755) }
