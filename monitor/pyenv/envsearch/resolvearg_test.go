package envsearch_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestResolveArg: an environment resolves to itself, a uv project whose
// .venv is not made yet is a *NotCreatedError carrying the path as typed,
// the rule and the command, and a folder that is neither wraps ErrNotEnv;
// Given answers as Search does for the same paths.
func TestResolveArg(t *testing.T) {
	root := t.TempDir()
	env := filepath.Join(root, "env")
	if err := pyenvtest.Write(env, pyenvtest.Spec{}); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "uv.lock"), []byte("version = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(root, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	w := managers.Where{Getenv: func(string) string { return "" }, Home: root, System: []string{}}

	if r, err := envsearch.ResolveArg(env, w); err != nil || r.Env != env {
		t.Errorf("ResolveArg(env) = %+v, %v", r, err)
	}
	r, err := envsearch.ResolveArg(proj, w)
	nc, ok := envsearch.IsNotCreated(err)
	if !ok || nc.Arg != proj || nc.Project != proj || r.Create != "uv sync" {
		t.Fatalf("ResolveArg(project without .venv) = %+v, %v", r, err)
	}
	if want := proj + " (uv project) has no environment yet: create it with `uv sync` in that folder"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if got := nc.NotCreated("the project folder"); !strings.HasPrefix(got, "the project folder (uv project) has no environment yet") {
		t.Errorf("NotCreated = %q", got)
	}
	if _, err := envsearch.ResolveArg(empty, w); !errors.Is(err, pyenv.ErrNotEnv) {
		t.Errorf("ResolveArg(empty folder) error = %v, want ErrNotEnv", err)
	}

	// Given of the resolutions is Search of the paths, without resolving
	// them again; a path given twice is listed once.
	re, _ := envsearch.Resolve(env, w)
	rp, _ := envsearch.Resolve(proj, w)
	given := envsearch.Given([]managers.Resolution{re, rp, re})
	searched := envsearch.Search(t.Context(), envsearch.Options{Paths: []string{env, proj, env}, Getenv: w.Getenv, Home: root, System: []string{}})
	if len(given.Found) != 2 || !given.Complete {
		t.Fatalf("Given = %+v", given)
	}
	for i := range given.Found {
		if given.Found[i] != searched.Found[i] {
			t.Errorf("Given[%d] = %+v, Search = %+v", i, given.Found[i], searched.Found[i])
		}
	}
}
