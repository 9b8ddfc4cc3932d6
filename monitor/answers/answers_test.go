package answers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/fstrace"
)

// env is a folder with two files, dated an hour back (an installed
// environment's files are not being written).
func env(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range map[string]string{"pyvenv.cfg": "home = /usr/bin\n", "METADATA": "Name: torch\nVersion: 2.5.1\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{root, filepath.Join(root, "pyvenv.cfg"), filepath.Join(root, "METADATA")} {
		os.Chtimes(p, old, old)
	}
	return root
}

// read is a read of env with its trace, asking for one variable.
func read(t *testing.T, root string, getenv func(string) string) *fstrace.Trace {
	t.Helper()
	tr := fstrace.New()
	if _, err := tr.ReadDir(root); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.ReadFile(filepath.Join(root, "pyvenv.cfg"), 1<<10); err != nil {
		t.Fatal(err)
	}
	tr.Stat(filepath.Join(root, "conda-meta"))
	tr.Getenv(getenv)("PYTHONNOUSERSITE")
	return tr
}

func noVars(string) string { return "" }

var answer = Answer{Verdict: "ok", JSON: []byte(`{"path": "/x", "verdict": "ok"}`)}

func TestKeptAnswerHoldsUntilItsReadWouldChange(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct {
		change func(root string)
		inputs string
		vars   func(string) string
	}{
		"nothing changed": {change: func(string) {}},
		"a file read was rewritten": {change: func(root string) {
			os.WriteFile(filepath.Join(root, "pyvenv.cfg"), []byte("home = /opt/bin\n"), 0o644)
		}},
		"a path not there was made": {change: func(root string) { os.Mkdir(filepath.Join(root, "conda-meta"), 0o755) }},
		"an entry added to a folder listed": {change: func(root string) {
			os.WriteFile(filepath.Join(root, "extra.pth"), nil, 0o644)
		}},
		"other inputs (another GPU, program or setting)": {change: func(string) {}, inputs: "gpu: H100"},
		"a variable the read asked for is set": {change: func(string) {}, vars: func(n string) string {
			if n == "PYTHONNOUSERSITE" {
				return "1"
			}
			return ""
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			root := env(t)
			s := Open(filepath.Join(dir, strings.ReplaceAll(name, " ", "-")), []byte("gpu: A100"), noVars)
			if err := s.Put(root, read(t, root, noVars), answer); err != nil {
				t.Fatal(err)
			}
			c.change(root)
			inputs, vars := cmpOr(c.inputs, "gpu: A100"), c.vars
			if vars == nil {
				vars = noVars
			}
			got, ok := Open(s.dir, []byte(inputs), vars).Get(root)
			want := name == "nothing changed"
			if ok != want {
				t.Fatalf("Get found an answer: %v, want %v", ok, want)
			}
			if ok && (got.Verdict != answer.Verdict || string(got.JSON) != string(answer.JSON)) {
				t.Fatalf("Get = %+v, want %+v", got, answer)
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestAnAnswerIsAboutItsSubjectOnly(t *testing.T) {
	root := env(t)
	s := Open(t.TempDir(), []byte("in"), noVars)
	if err := s.Put(root+" via home", read(t, root, noVars), answer); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get(root + " via argument"); ok {
		t.Fatal("an answer about the environment found another way was given")
	}
	if _, ok := s.Get(root + " via home"); !ok {
		t.Fatal("the answer kept was not given")
	}
}

func TestNotKeptWhenTheReadCannotVouch(t *testing.T) {
	root := env(t)
	s := Open(t.TempDir(), []byte("in"), noVars)
	fresh := read(t, root, noVars)
	os.WriteFile(filepath.Join(root, "new"), nil, 0o644)
	fresh.Stat(filepath.Join(root, "new")) // written just now: racy
	if err := s.Put(root, fresh, answer); err == nil || !strings.Contains(err.Error(), "changed within") {
		t.Fatalf("Put of a racy read = %v, want it refused", err)
	}
	unsure := read(t, root, noVars)
	unsure.MarkUnsure("permission denied")
	if err := s.Put(root, unsure, answer); err == nil {
		t.Fatal("Put of an unsure read was kept")
	}
	if _, ok := s.Get(root); ok {
		t.Fatal("an answer was given though none was kept")
	}
}

func TestEveryTruncationAndCorruptionIsAMiss(t *testing.T) {
	root := env(t)
	s := Open(t.TempDir(), []byte("in"), noVars)
	if err := s.Put(root, read(t, root, noVars), answer); err != nil {
		t.Fatal(err)
	}
	file := s.file(root)
	whole, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(whole) {
		os.WriteFile(file, whole[:n], 0o600)
		if _, ok := s.Get(root); ok {
			t.Fatalf("an answer truncated to %d of %d bytes was given", n, len(whole))
		}
	}
	bad := append([]byte(nil), whole...)
	bad[len(magic)] ^= 0xff // the inputs' sum
	os.WriteFile(file, bad, 0o600)
	if _, ok := s.Get(root); ok {
		t.Fatal("an answer with another inputs' sum was given")
	}
	os.WriteFile(file, whole, 0o600)
	if _, ok := s.Get(root); !ok {
		t.Fatal("the whole answer, written back, was not given")
	}
}

func TestSweepRemovesOldAnswersAndLeftovers(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir, []byte("in"), noVars)
	old := filepath.Join(dir, "0123.answer")
	leftover := filepath.Join(dir, ".0123.answer-123.tmp")
	recent := filepath.Join(dir, "4567.answer")
	other := filepath.Join(dir, "notes.txt")
	for _, p := range []string{old, leftover, recent, other} {
		os.WriteFile(p, nil, 0o600)
	}
	long := time.Now().Add(-MaxAge - time.Hour)
	os.Chtimes(old, long, long)
	os.Chtimes(other, long, long)
	hours := time.Now().Add(-2 * time.Hour)
	os.Chtimes(leftover, hours, hours)
	root := env(t)
	if err := s.Put(root, read(t, root, noVars), answer); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{old: false, leftover: false, recent: true, other: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s there: %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
	// swept once a day: an old answer made now stays until tomorrow
	os.WriteFile(old, nil, 0o600)
	os.Chtimes(old, long, long)
	Open(dir, []byte("in"), noVars).Put(root, read(t, root, noVars), answer)
	if _, err := os.Stat(old); err != nil {
		t.Error("swept twice in a day")
	}
}

func TestNilStoreKeepsNothing(t *testing.T) {
	s := Open("", []byte("in"), nil)
	if s != nil {
		t.Fatal("a store without a folder")
	}
	root := env(t)
	if err := s.Put(root, read(t, root, noVars), answer); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get(root); ok {
		t.Fatal("a nil store gave an answer")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(encode(kept{subject: "/x", seen: []fstrace.Seen{{Path: "/x/a"}, {Path: "/x/b", Absent: true}}, vars: map[string]string{"A": "1"}, answer: answer}))
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := decode(data)
		if err != nil {
			return
		}
		// what decodes encodes back to bytes that decode the same
		again, err := decode(encode(k))
		if err != nil || again.subject != k.subject || len(again.seen) != len(k.seen) || string(again.answer.JSON) != string(k.answer.JSON) {
			t.Fatalf("decoded %+v, encoded and decoded again %+v (%v)", k, again, err)
		}
	})
}
