package guard_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/guard"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestClearWithoutRecord is issue 42's item 10: a guard whose record is
// gone, or damaged, dead-ended unguard ("nothing to lift" over a pip.conf
// that still held the guard) and guard. Marked finds the guard by its
// marks; Clear takes out exactly the guard's part and says what it did,
// and a guard can be set again after it.
func TestClearWithoutRecord(t *testing.T) {
	conda := pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: "12.1"}, CondaTorchBuild: "py3.11_cuda12.1_cudnn8.9.2_0"}
	cases := []struct {
		name   string
		spec   pyenvtest.Spec
		pre    map[string]string
		damage string // "remove" the record, or "corrupt" it
	}{
		{name: "venv, record removed", spec: pyenvtest.Spec{Torch: cudaTorch}, damage: "remove"},
		{name: "venv, record corrupt", spec: pyenvtest.Spec{Torch: cudaTorch}, damage: "corrupt"},
		{name: "their pip.conf with an [install] section", spec: pyenvtest.Spec{Torch: cudaTorch}, damage: "remove",
			pre: map[string]string{"pip.conf": "[global]\nindex-url = https://mirror.example/simple\n\n[install]\nno-warn-script-location = true\n"}},
		{name: "their pip.conf with their own constraint", spec: pyenvtest.Spec{Torch: cudaTorch}, damage: "corrupt",
			pre: map[string]string{"pip.conf": "[global]\ntimeout = 60\nconstraint = /srv/theirs.txt\n"}},
		{name: "their pip.conf, CRLF", spec: pyenvtest.Spec{Torch: cudaTorch}, damage: "remove",
			pre: map[string]string{"pip.conf": "[global]\r\ntimeout = 60\r\n"}},
		{name: "conda: their pinned", spec: conda, damage: "corrupt",
			pre: map[string]string{"conda-meta/pinned": "numpy 1.26.*\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := write(t, filepath.Join(t.TempDir(), "env"), c.spec)
			for n, s := range c.pre {
				must(t, os.WriteFile(filepath.Join(env, filepath.FromSlash(n)), []byte(s), 0o640))
			}
			before := tree(t, env)
			k := guard.Keeper{StateDir: t.TempDir()}
			if _, err := k.Guard(env); err != nil {
				t.Fatal(err)
			}
			recs, _ := filepath.Glob(filepath.Join(k.StateDir, "guard", "*", "record.json"))
			if len(recs) != 1 {
				t.Fatalf("records: %v", recs)
			}
			if c.damage == "remove" {
				must(t, os.Remove(recs[0]))
				if _, err := k.Unguard(env, false); !errors.Is(err, guard.ErrNotGuarded) {
					t.Fatalf("Unguard without a record = %v", err)
				}
				if _, err := k.Guard(env); err == nil || !strings.Contains(err.Error(), "unguard --force") {
					t.Fatalf("Guard over an unrecorded guard = %v; want it refused, naming unguard --force", err)
				}
			} else {
				must(t, os.WriteFile(recs[0], []byte("{not json"), 0o600))
				var re *guard.RecordError
				if _, err := k.Guard(env); !errors.As(err, &re) || !strings.Contains(err.Error(), "unguard --force") {
					t.Fatalf("Guard over a corrupt record = %v; want a RecordError naming unguard --force", err)
				}
			}
			if m := k.Marked(env); len(m) == 0 {
				t.Fatal("Marked finds no guard in the files the guard wrote")
			}
			res, err := k.Clear(env)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Lines) < 2 || !strings.Contains(strings.Join(res.Lines, "\n"), "removed "+filepath.Join(env, guard.ConstraintsName)) {
				t.Errorf("Clear says: %q", res.Lines)
			}
			if d := diffTrees(before, tree(t, env)); len(d) > 0 {
				t.Errorf("Clear did not give back the environment:\n%s", strings.Join(d, "\n"))
			}
			if m := k.Marked(env); len(m) > 0 {
				t.Errorf("marks left: %v", m)
			}
			if recs, _ := filepath.Glob(filepath.Join(k.StateDir, "guard", "*")); len(recs) > 0 {
				t.Errorf("record left: %v", recs)
			}
			if _, err := k.Guard(env); err != nil {
				t.Fatalf("a guard after Clear: %v", err)
			}
			if _, err := k.Unguard(env, false); err != nil {
				t.Fatal(err)
			}
			if _, err := k.Clear(env); !errors.Is(err, guard.ErrNotGuarded) {
				t.Errorf("Clear with no guard left = %v; want ErrNotGuarded", err)
			}
		})
	}
}
