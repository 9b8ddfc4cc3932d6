package fstrace

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLooksFromTheBaseFolder: the paths under the folder most looks are
// in are looked at from it, and still tell every change.
func TestLooksFromTheBaseFolder(t *testing.T) {
	for _, change := range []string{"none", "rewritten", "removed", "made a link", "folder replaced"} {
		t.Run(change, func(t *testing.T) {
			root := t.TempDir()
			site := filepath.Join(root, "lib", "site-packages")
			os.MkdirAll(filepath.Join(site, "torch"), 0o755)
			var files []string
			for i := range 5 {
				p := filepath.Join(site, "torch", fmt.Sprintf("f%d.py", i))
				os.WriteFile(p, []byte("x = 1\n"), 0o644)
				files = append(files, p)
			}
			old := time.Now().Add(-time.Hour)
			filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { os.Chtimes(p, old, old); return nil })

			tr := New()
			tr.ReadDir(site)
			for _, f := range files {
				tr.ReadFile(f, 1<<10)
			}
			tr.Lstat(filepath.Join(site, "torch", "gone.py"))
			if got := baseOf(tr.Seen()); got != site {
				t.Fatalf("base = %q, want %q", got, site)
			}
			switch change {
			case "rewritten":
				os.WriteFile(files[3], []byte("x = 2\n"), 0o644)
				os.Chtimes(files[3], old, old)
			case "removed":
				os.Remove(files[4])
			case "made a link":
				os.Symlink("f0.py", filepath.Join(site, "torch", "gone.py"))
			case "folder replaced":
				os.Rename(site, site+".old")
				os.MkdirAll(filepath.Join(site, "torch"), 0o755)
				for _, f := range files {
					os.WriteFile(f, []byte("x = 1\n"), 0o644)
					os.Chtimes(f, old, old)
				}
			}
			if holds := NewChecker().Holds(tr.Seen()); holds != (change == "none") {
				t.Fatalf("Holds = %v after %s", holds, change)
			}
		})
	}
}

// TestFullLookStandsForItsIdentity: a folder looked at for what it is
// and then listed is looked at again once, and still tells a change.
func TestFullLookStandsForItsIdentity(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "torch")
	os.Mkdir(dir, 0o755)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(dir, old, old)
	for _, order := range []string{"identity first", "full first"} {
		tr := New()
		if order == "identity first" {
			tr.StatKind(dir)
			tr.ReadDir(dir)
		} else {
			tr.ReadDir(dir)
			tr.StatKind(dir)
		}
		seen := tr.Seen()
		if len(seen) != 1 || seen[0].Look != Follow {
			t.Fatalf("%s: seen = %+v, want one full look", order, seen)
		}
	}
	tr := New()
	tr.StatKind(dir)
	tr.ReadDir(dir)
	os.WriteFile(filepath.Join(dir, "new.py"), nil, 0o644)
	if NewChecker().Holds(tr.Seen()) {
		t.Fatal("holds after the folder gained an entry")
	}
}
