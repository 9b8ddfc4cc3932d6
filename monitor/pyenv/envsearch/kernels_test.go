package envsearch_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
)

// TestKernelInterpreterGone: a Jupyter kernel whose kernel.json names an
// interpreter that does not exist (its environment deleted, or a link
// that leads nowhere) is found with Missing set to that interpreter and
// Path where its environment was, not dropped; a kernel of a venv whose
// interpreter is gone finds the venv, whose reading says so.
func TestKernelInterpreterGone(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	kernels := filepath.Join(home, ".local", "share", "jupyter", "kernels")
	kernel := func(name, exe string) string {
		writeFile(t, filepath.Join(kernels, name), "kernel.json",
			`{"argv": ["`+filepath.ToSlash(exe)+`", "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "`+name+`", "language": "python"}`)
		return filepath.Join(kernels, name, "kernel.json")
	}
	goneEnv := filepath.Join(base, "gone", "envs", "gpu")
	gpu := kernel("gpu", filepath.Join(goneEnv, "bin", "python"))

	// a link that leads nowhere, outside any environment
	links := filepath.Join(base, "links")
	must(t, os.MkdirAll(links, 0o755))
	must(t, os.Symlink(filepath.Join(base, "gone", "python3.11"), filepath.Join(links, "python3")))
	linked := kernel("linked", filepath.Join(links, "python3"))

	// a venv that is there, with bin/python dangling
	dead := cudaVenv(t, filepath.Join(base, "other", "dead"), pyenv.LayoutPOSIX)
	relink(t, filepath.Join(base, "gone", "bin", "python3.11"), filepath.Join(dead, "bin", "python"))
	deadKernel := kernel("dead", filepath.Join(dead, "bin", "python"))

	o := envsearch.Options{Home: home, Cwd: filepath.Join(base, "nocwd"), System: []string{}, MaxDepth: 1,
		Getenv: func(string) string { return "" }}
	got := discover(context.Background(), o)
	for _, want := range []envsearch.Found{
		{Path: goneEnv, Via: "jupyter", From: gpu, Missing: filepath.Join(goneEnv, "bin", "python")},
		{Path: links, Via: "jupyter", From: linked, Missing: filepath.Join(links, "python3")},
		{Path: dead, Via: "jupyter", From: deadKernel},
	} {
		if !slices.Contains(got, want) {
			t.Errorf("Discover =\n%v\nwant among them %+v", got, want)
		}
	}
	env, err := pyenv.InspectWith(dead, noUser(home))
	must(t, err)
	if problemOf(env, pyenv.ProblemInterpreterMissing) == nil {
		t.Errorf("the dead kernel's venv has problems %+v; want its interpreter said missing", env.Problems)
	}
	for _, p := range o.Places() {
		if p == goneEnv || p == links {
			t.Errorf("Places lists %s, where a kernel's interpreter is missing: nothing is there to search", p)
		}
	}
}
