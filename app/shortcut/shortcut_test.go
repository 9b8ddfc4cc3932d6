package shortcut

import (
	"os"
	"path/filepath"
	"testing"
)

func TestStampFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, Name)
	if wrote, err := stamp(path, id); err != nil || wrote {
		t.Fatalf("stamp without a shortcut: wrote %v, %v", wrote, err)
	}
	if err := os.WriteFile(path, fixture(t), 0o644); err != nil {
		t.Fatal(err)
	}
	if wrote, err := stamp(path, id); err != nil || !wrote {
		t.Fatalf("stamp: wrote %v, %v", wrote, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := AppID(data); err != nil || got != id {
		t.Fatalf("the shortcut read back carries %q, %v", got, err)
	}
	if wrote, err := stamp(path, id); err != nil || wrote {
		t.Errorf("a second stamp: wrote %v, %v", wrote, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder holds %d files, want the shortcut alone", len(entries))
	}
	if err := os.WriteFile(path, []byte("not a link"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := stamp(path, id); err == nil {
		t.Error("stamp of a file that is no shortcut: no error")
	}
	if data, _ := os.ReadFile(path); string(data) != "not a link" {
		t.Error("stamp changed a file that is no shortcut")
	}
}
