//go:build !windows

package config

import (
	"os"
	"path/filepath"
	"testing"
)

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// TestSettingsArePrivate: the settings may hold an index URL with a
// password, so the file is 0600 and GPU Canary's settings folder 0700,
// also when an older version made it 0755.
func TestSettingsArePrivate(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	path, err := Path()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	c := Default()
	c.IndexBase = "https://ada:s3cret@mirror.example/whl"
	if err := Save(path, c); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, path); m != 0o600 {
		t.Errorf("settings file is %o, want 600", m)
	}
	if m := mode(t, filepath.Dir(path)); m != 0o700 {
		t.Errorf("settings folder is %o, want 700", m)
	}
}

// TestSaveElsewhereLeavesTheFolder: --config names a file in a folder
// that is not GPU Canary's own; its folder's mode is the user's business.
func TestSaveElsewhereLeavesTheFolder(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	shared := filepath.Join(t.TempDir(), "team")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	if err := Save(filepath.Join(shared, "gpucanary.toml"), Default()); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, shared); m != 0o755 {
		t.Errorf("a folder that is not GPU Canary's own became %o", m)
	}
	if m := mode(t, filepath.Join(shared, "gpucanary.toml")); m != 0o600 {
		t.Errorf("settings file is %o, want 600", m)
	}
}

// TestWriteAtomicMakesMissingFoldersPrivate: state, history and the
// repair journal go through WriteAtomic.
func TestWriteAtomicMakesMissingFoldersPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := WriteAtomic(filepath.Join(dir, "f.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if m := mode(t, d); m != 0o700 {
			t.Errorf("%s is %o, want 700", d, m)
		}
	}
}
