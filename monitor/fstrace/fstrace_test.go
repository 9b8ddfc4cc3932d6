package fstrace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/fstrace"
)

// tree is a small environment-like tree, dated back past Racy.
func tree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "lib", "site-packages", "torch"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "lib", "site-packages", "torch", "version.py"), []byte("__version__ = '2.5.1'\n"), 0o644))
	must(t, os.Symlink("lib", filepath.Join(root, "lib64")))
	old := time.Now().Add(-time.Hour)
	filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { os.Chtimes(p, old, old); return nil })
	return root
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// read is a reader's looks: a listing, two files, a path not there and
// a path through a link.
func read(t *testing.T, root string) *fstrace.Trace {
	t.Helper()
	tr := fstrace.New()
	if _, err := tr.ReadDir(filepath.Join(root, "lib", "site-packages")); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.ReadFile(filepath.Join(root, "pyvenv.cfg"), 1<<10); err != nil {
		t.Fatal(err)
	}
	f, err := tr.Open(filepath.Join(root, "lib", "site-packages", "torch", "version.py"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := tr.Stat(filepath.Join(root, "conda-meta")); err == nil {
		t.Fatal("conda-meta is there")
	}
	if _, err := tr.EvalSymlinks(filepath.Join(root, "lib64", "site-packages")); err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestHoldsUntilSomethingSeenChanges(t *testing.T) {
	changes := map[string]func(root string) error{
		"a file's content, its time set back": func(root string) error {
			p := filepath.Join(root, "pyvenv.cfg")
			fi, _ := os.Stat(p)
			if err := os.WriteFile(p, []byte("home = /usr/local\n"), 0o644); err != nil {
				return err
			}
			return os.Chtimes(p, fi.ModTime(), fi.ModTime())
		},
		"a file removed": func(root string) error {
			return os.Remove(filepath.Join(root, "lib", "site-packages", "torch", "version.py"))
		},
		"an entry added to a listed folder": func(root string) error {
			return os.Mkdir(filepath.Join(root, "lib", "site-packages", "torch-2.6.0.dist-info"), 0o755)
		},
		"a path that was not there made": func(root string) error {
			return os.Mkdir(filepath.Join(root, "conda-meta"), 0o755)
		},
		"a link on the way made again": func(root string) error {
			must(t, os.MkdirAll(filepath.Join(root, "lib2", "site-packages"), 0o755))
			must(t, os.Remove(filepath.Join(root, "lib64")))
			return os.Symlink("lib2", filepath.Join(root, "lib64"))
		},
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			root := tree(t)
			tr := read(t, root)
			if why := tr.Unsure(); why != "" {
				t.Fatalf("unsure: %s", why)
			}
			if !fstrace.NewChecker().Holds(tr.Seen()) {
				t.Fatal("does not hold before any change")
			}
			must(t, change(root))
			if fstrace.NewChecker().Holds(tr.Seen()) {
				t.Fatalf("still holds after %s; seen: %+v", name, tr.Seen())
			}
		})
	}
}

func TestEachPathOnceInOrder(t *testing.T) {
	root := tree(t)
	tr := fstrace.New()
	p := filepath.Join(root, "pyvenv.cfg")
	tr.Stat(p)
	tr.ReadFile(p, 1<<10)
	tr.Lstat(p)
	seen := tr.Seen()
	if len(seen) != 2 || seen[0].Look != fstrace.Follow || seen[1].Look != fstrace.NoFollow {
		t.Fatalf("seen = %+v, want one Follow then one NoFollow look", seen)
	}
}

func TestKeepable(t *testing.T) {
	root := tree(t)
	tr := read(t, root)
	if ok, why := tr.Keepable(time.Now()); !ok {
		t.Fatalf("not keepable: %s", why)
	}
	fresh := filepath.Join(root, "fresh")
	must(t, os.WriteFile(fresh, []byte("x"), 0o644))
	tr.Stat(fresh)
	if ok, why := tr.Keepable(time.Now()); ok || !strings.Contains(why, "fresh") {
		t.Fatalf("keepable with a file written now (%q)", why)
	}
	if ok, _ := tr.Keepable(time.Now().Add(fstrace.Racy + time.Second)); !ok {
		t.Fatal("not keepable once the write is older than Racy")
	}
}

func TestUnsureOnAFailureTheStampDoesNotExplain(t *testing.T) {
	root := tree(t)
	loop := filepath.Join(root, "loop")
	must(t, os.Symlink("loop", loop))
	tr := fstrace.New()
	tr.ReadFile(filepath.Join(root, "pyvenv.cfg"), 1) // too large: settled
	tr.ReadDir(filepath.Join(root, "pyvenv.cfg"))     // not a folder: settled
	if why := tr.Unsure(); why != "" {
		t.Fatalf("unsure after failures the stamp explains: %s", why)
	}
	tr.Stat(loop) // too many links: neither there nor not
	if why := tr.Unsure(); !strings.Contains(why, "loop") {
		t.Fatalf("unsure = %q, want the link loop named", why)
	}
	if ok, _ := tr.Keepable(time.Now()); ok {
		t.Fatal("keepable while unsure")
	}
}

func TestNilTraceOnlyDoesTheCall(t *testing.T) {
	root := tree(t)
	var tr *fstrace.Trace
	if _, err := tr.ReadFile(filepath.Join(root, "pyvenv.cfg"), 1<<10); err != nil {
		t.Fatal(err)
	}
	if real, err := tr.EvalSymlinks(filepath.Join(root, "lib64")); err != nil || filepath.Base(real) != "lib" {
		t.Fatalf("EvalSymlinks = %q, %v", real, err)
	}
	tr.MarkUnsure("nothing to mark")
}

func TestFoldersOnTheWayHoldWhenTheirEntriesChange(t *testing.T) {
	root := tree(t)
	tr := read(t, root)
	// root's parent (a temporary folder) and root itself gain entries:
	// neither is listed, both are only on the way.
	must(t, os.WriteFile(filepath.Join(filepath.Dir(root), "other-"+filepath.Base(root)), nil, 0o644))
	defer os.Remove(filepath.Join(filepath.Dir(root), "other-"+filepath.Base(root)))
	must(t, os.WriteFile(filepath.Join(root, "notes.txt"), nil, 0o644))
	if !fstrace.NewChecker().Holds(tr.Seen()) {
		t.Fatalf("does not hold after entries were added to folders on the way: %+v", tr.Seen())
	}
}
