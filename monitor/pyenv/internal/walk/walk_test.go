package walk

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// markerJudge takes a folder holding a file named "marker" for an
// environment, with its "envs" folder holding more.
var markerJudge = Judge{
	Env: func(_ string, ents []os.DirEntry) (bool, []string) {
		return Find(ents, "marker") != nil, []string{"envs"}
	},
	LinkEnv: func(p string) bool { _, err := os.Stat(filepath.Join(p, "marker")); return err == nil },
	Names:   []string{".venv"},
}

func mkenv(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "marker"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTree: environments are found, their nested folders searched, the
// folders that hold none and what lies past the depth are not entered,
// a link is followed only to an environment, and a budget that ends the
// walk says so.
func TestTree(t *testing.T) {
	root := t.TempDir()
	mkenv(t, filepath.Join(root, "proj", ".venv"))
	mkenv(t, filepath.Join(root, "base"))
	mkenv(t, filepath.Join(root, "base", "envs", "gpu"))
	mkenv(t, filepath.Join(root, "node_modules", "pkg", ".venv"))
	mkenv(t, filepath.Join(root, "a", "b", "c", "deep"))
	if err := os.Symlink(filepath.Join(root, "proj", ".venv"), filepath.Join(root, "linked")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	var got []string
	stopped, err := Tree(context.Background(), root, Limits{Depth: 3, Entries: 1000}, markerJudge, func(p string) {
		got = append(got, strings.TrimPrefix(p, root+string(filepath.Separator)))
	})
	if err != nil || stopped != "" {
		t.Fatalf("Tree = %q, %v; want a complete walk", stopped, err)
	}
	slices.Sort(got)
	want := []string{"base", filepath.Join("base", "envs", "gpu"), "linked", filepath.Join("proj", ".venv")}
	if !slices.Equal(got, want) {
		t.Errorf("found %q, want %q", got, want)
	}
	stopped, _ = Tree(context.Background(), root, Limits{Depth: 3, Entries: 2}, markerJudge, func(string) {})
	if !strings.Contains(stopped, "budget of 2 entries") {
		t.Errorf("a walk past its entry budget stopped with %q", stopped)
	}
	if _, err := Tree(context.Background(), filepath.Join(root, "gone"), Limits{Depth: 3, Entries: 10}, markerJudge, func(string) {}); err == nil {
		t.Error("a root that does not exist was walked")
	}
}
