package app

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// uvOnPath puts a program named uv at the head of PATH, so the fix
// commands the rules write (which name uv only where it is found, as
// `gpucanary fix` does) are uv's on any machine.
func uvOnPath(t *testing.T) {
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
}
