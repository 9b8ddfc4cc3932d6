package uvproject

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestFinder: a Finder finds what FindProject finds, and remembers the
// folders that held neither pyproject.toml nor .git for its pass: a
// project made in one after it was looked in is not seen by that pass,
// and is by the next (a new Finder) and by FindProject.
func TestFinder(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", filepath.Join(root, "elsewhere"))
	withProject := filepath.Join(root, "a", "proj")
	os.MkdirAll(filepath.Join(withProject, ".venv"), 0o755)
	os.WriteFile(filepath.Join(withProject, "pyproject.toml"), []byte("[project]\nname = \"p\"\n"), 0o644)
	os.WriteFile(filepath.Join(withProject, "uv.lock"), []byte("version = 1\n"), 0o644)
	bare := filepath.Join(root, "b", "x", ".venv")
	os.MkdirAll(bare, 0o755)

	ctx := WithFinder(context.Background())
	f := FinderFrom(ctx)
	if f == nil {
		t.Fatal("WithFinder's context has no Finder")
	}
	for range 2 { // the second time from what it remembers
		if p, ok := f.Find(filepath.Join(withProject, ".venv")); !ok || p.Dir != withProject || p.Lock == "" {
			t.Fatalf("Find = %+v, %v; want the project at %s", p, ok, withProject)
		}
		if p, ok := f.Find(bare); ok {
			t.Fatalf("Find(bare) = %+v", p)
		}
	}
	// A project made after the pass looked: not this pass's.
	made := filepath.Join(root, "b", "x")
	os.WriteFile(filepath.Join(made, "pyproject.toml"), []byte("[tool.uv]\n"), 0o644)
	if _, ok := f.Find(bare); ok {
		t.Error("the pass saw a project made after it looked in the folder")
	}
	if p, ok := FindProject(bare); !ok || p.Dir != made {
		t.Errorf("FindProject = %+v, %v; want the new project", p, ok)
	}
	if p, ok := FinderFrom(WithFinder(context.Background())).Find(bare); !ok || p.Dir != made {
		t.Errorf("a new pass = %+v, %v; want the new project", p, ok)
	}
	var none *Finder
	if p, ok := none.Find(bare); !ok || p.Dir != made {
		t.Errorf("a nil Finder = %+v, %v", p, ok)
	}
	if FinderFrom(context.Background()) != nil {
		t.Error("a context without a Finder gave one")
	}
}
