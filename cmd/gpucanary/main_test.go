package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// runMainEnv, set in a child's environment, makes the test binary run
// main() with its arguments: the tests that need the program as a user
// runs it (a terminal, no display, the locale read at start) run this
// binary, which holds the same packages, initialized in the same order.
const runMainEnv = "GPUCANARY_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	// What the runs keep (answers, file facts, the kernel cache) goes to
	// a cache folder of the tests' own, not the user's: a test's
	// environments are gone when it ends, and what was kept of them
	// with them.
	// Go's build cache is under the same folder by default: the builds
	// the tests run (go build of the headless CLI) keep using the user's.
	if os.Getenv("GOCACHE") == "" {
		if user, err := os.UserCacheDir(); err == nil {
			os.Setenv("GOCACHE", filepath.Join(user, "go-build"))
		}
	}
	cache, err := os.MkdirTemp("", "gpucanary-test-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}

// programCommand is the program run with args, as a user would run it.
func programCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	return cmd
}
