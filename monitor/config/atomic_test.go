//go:build !windows

package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSaveThroughSymlink: a settings file kept elsewhere (a dotfiles
// repository) and linked into the settings folder is written where it
// is; the link stays.
func TestSaveThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "gpucanary.toml")
	if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("refresh = \"5s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "gpucanary", "config.toml")
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	c := Default()
	c.Roots = []string{"/srv/envs"}
	if err := Save(link, c); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced by a file: %v, %v", fi.Mode(), err)
	}
	got, err := Load(real)
	if err != nil || len(got.Roots) != 1 || got.Roots[0] != "/srv/envs" {
		t.Errorf("the link's target holds %+v, %v", got, err)
	}
	if m := mode(t, real); m != 0o600 {
		t.Errorf("the target is %v, want 0600", m)
	}
}
