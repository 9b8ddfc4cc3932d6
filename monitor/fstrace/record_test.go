package fstrace_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/fstrace"
)

// TestRecordReplaysLooks: looks replayed from a memo are checked as the
// trace's own (a pyproject.toml made where the memo saw none breaks the
// trace), a path looked at already keeps its first look, and a nil trace
// takes none.
func TestRecordReplaysLooks(t *testing.T) {
	root := tree(t)
	memo := fstrace.New()
	memo.Stat(filepath.Join(root, "pyproject.toml")) // not there
	tr := fstrace.New()
	tr.Stat(filepath.Join(root, "pyvenv.cfg"))
	tr.Record(memo.Seen())
	tr.Record(memo.Seen())
	var none *fstrace.Trace
	none.Record(memo.Seen())
	if got := len(tr.Seen()); got != 2 {
		t.Fatalf("%d looks, want pyvenv.cfg and the replayed pyproject.toml: %+v", got, tr.Seen())
	}
	if !fstrace.NewChecker().Holds(tr.Seen()) {
		t.Fatal("the trace does not hold on an unchanged tree")
	}
	must(t, os.WriteFile(filepath.Join(root, "pyproject.toml"), []byte("[tool.uv]\n"), 0o644))
	if fstrace.NewChecker().Holds(tr.Seen()) {
		t.Error("a pyproject.toml made where the replayed look saw none: the trace still holds")
	}
}

// TestUserHomeDirIsRecorded: the home folder is os.UserHomeDir's, and
// the variable it comes from is among the trace's.
func TestUserHomeDirIsRecorded(t *testing.T) {
	name := "HOME"
	if runtime.GOOS == "windows" {
		name = "USERPROFILE"
	}
	home := t.TempDir()
	t.Setenv(name, home)
	tr := fstrace.New()
	got, err := tr.UserHomeDir()
	if err != nil || got != home {
		t.Fatalf("UserHomeDir = %q, %v; want %q", got, err, home)
	}
	if v, ok := tr.Vars()[name]; !ok || v != home {
		t.Errorf("Vars = %v, want %s=%s", tr.Vars(), name, home)
	}
}
