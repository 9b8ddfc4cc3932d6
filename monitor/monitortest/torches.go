package monitortest

import (
	"testing"

	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// Torches is a find-links folder of torch 2.5.1 wheels (cu121, cpu,
// cu124) that real pip installs from, and the Python that runs it.
type Torches struct {
	py    string
	links string
}

// NewTorches writes the wheels; it skips the test without a Python that
// can make a venv (wheeltest.Python).
func NewTorches(t testing.TB) Torches {
	t.Helper()
	f := Torches{py: wheeltest.Python(t), links: t.TempDir()}
	for _, s := range []wheeltest.Spec{wheeltest.Torch("2.5.1", "cu121"), wheeltest.Torch("2.5.1", "cpu"), wheeltest.Torch("2.5.1", "cu124")} {
		if _, err := wheeltest.Write(f.links, s); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// Venv makes a venv at dir with torch 2.5.1+cu121 installed by real pip.
func (f Torches) Venv(t testing.TB, dir string) string {
	t.Helper()
	wheeltest.NewVenv(t, f.py, dir)
	f.Install(t, dir, "2.5.1+cu121")
	return dir
}

// Install force-reinstalls torch==version in venv from the wheels.
func (f Torches) Install(t testing.TB, venv, version string) {
	t.Helper()
	wheeltest.Pip(t, f.py, venv, "install", "--no-index", "--find-links", f.links, "--force-reinstall", "torch=="+version)
}

// Links is the find-links folder of the wheels, for a test that runs pip
// itself (the soak: many installs at once, each timed by the test).
func (f Torches) Links() string { return f.links }
