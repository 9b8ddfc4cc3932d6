package envsearch_test

import (
	"os"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// The fixtures the search's tests lay out by hand, over pyenvtest's
// (the same ones pyenv's own tests use).

// pyvenv.cfg as each tool writes it.
const (
	cfgVenv       = pyenvtest.CfgVenv
	cfgVirtualenv = pyenvtest.CfgVirtualenv
	cfgUV         = pyenvtest.CfgUV
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// writeFile writes content at root/rel, creating folders.
func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	must(t, pyenvtest.WriteFile(root, rel, content))
}

// writePrefix lays out an interpreter's own installation
// (pyenvtest.WritePrefix) and returns its site-packages folder.
func writePrefix(t testing.TB, prefix, py string) string {
	t.Helper()
	site, err := pyenvtest.WritePrefix(prefix, py)
	must(t, err)
	return site
}

// writeTorch writes a torch into a site folder as a wheel install leaves
// it (pyenvtest.WriteTorch).
func writeTorch(t testing.TB, site, version, cuda string) {
	t.Helper()
	must(t, pyenvtest.WriteTorch(site, version, cuda))
}

// noUser inspects as a user whose home is home and who sets nothing.
func noUser(home string) pyenv.InspectOptions {
	return pyenv.InspectOptions{Home: home, Getenv: func(string) string { return "" }}
}

// cudaVenv writes a venv (pyvenv.cfg home = /usr/bin, bin/python a copy)
// with a CUDA torch, in layout l.
func cudaVenv(t *testing.T, root string, l pyenv.Layout) string {
	t.Helper()
	must(t, pyenvtest.Write(root, pyenvtest.Spec{Layout: l, Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}}))
	return root
}

// relink makes path a link to target, whatever was there.
func relink(t *testing.T, target, path string) {
	t.Helper()
	must(t, os.RemoveAll(path))
	must(t, os.Symlink(target, path))
}

// problemOf returns the environment's problem of kind, or nil.
func problemOf(env *pyenv.Env, kind string) *pyenv.Problem {
	for i := range env.Problems {
		if env.Problems[i].Kind == kind {
			return &env.Problems[i]
		}
	}
	return nil
}

// cuda128 is torch 2.7.0+cu128 for Windows: the CUDA DLLs inside
// torch\lib, as its wheel ships them.
func cuda128() *pyenvtest.Torch {
	return &pyenvtest.Torch{DistVersion: "2.7.0+cu128", CUDA: "12.8", Installer: "pip"}
}
