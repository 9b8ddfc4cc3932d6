package monitortest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// UVOnPath puts a program named uv (which fails if run) in a folder of
// its own at the head of PATH for the test, and returns the folder: the
// fix commands, which name uv only where it is found (as `gpucanary fix`
// does), are then uv's on any machine.
func UVOnPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	name, body := "uv", "#!/bin/sh\nexit 1\n"
	if runtime.GOOS == "windows" {
		name, body = "uv.bat", "@exit /b 1\r\n"
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}
