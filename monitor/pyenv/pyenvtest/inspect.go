package pyenvtest

import (
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Inspect writes spec at root and reads it back as GPU Canary reads an
// environment, failing the test on either error.
func Inspect(t testing.TB, root string, spec Spec) *pyenv.Env {
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
