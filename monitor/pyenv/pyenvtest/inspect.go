package pyenvtest

import "github.com/gpucanary/gpucanary/monitor/pyenv"

// TB is what Inspect asks of a test (testing.TB has it): the package does
// not import testing, so that a program (gpucanary demo) can write
// environments with it.
type TB interface {
	Helper()
	Fatal(args ...any)
}

// Inspect writes spec at root and reads it back as GPU Canary reads an
// environment, failing the test on either error.
func Inspect(t TB, root string, spec Spec) *pyenv.Env {
	t.Helper()
	if err := Write(root, spec); err != nil {
		t.Fatal(err)
	}
	env, err := pyenv.Inspect(root)
	if err != nil {
		t.Fatal(err)
	}
	return env
}
