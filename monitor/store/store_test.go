package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

func TestStateRoundTrip(t *testing.T) {
	s := Open(t.TempDir())
	st, warn := s.LoadState()
	if warn != nil || len(st.Envs) != 0 {
		t.Fatalf("empty store: got %v, %v", st, warn)
	}
	seen := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	st.Envs["/w/.venv"] = EnvRecord{Torch: &pyenv.Package{Version: "2.5.1+cu121", Build: pyenv.BuildCUDA, CUDA: "12.1"}, Seen: seen}
	if err := s.SaveState(st); err != nil {
		t.Fatal(err)
	}
	got, warn := Open(s.dir).LoadState()
	if warn != nil {
		t.Fatal(warn)
	}
	r := got.Envs["/w/.venv"]
	if r.Torch == nil || r.Torch.Version != "2.5.1+cu121" || !r.Seen.Equal(seen) {
		t.Fatalf("round trip: got %+v", r)
	}
	// A person can read it: indented JSON.
	data, _ := os.ReadFile(filepath.Join(s.dir, "state.json"))
	if !strings.Contains(string(data), "\n    \"envs\"") {
		t.Errorf("state.json is not indented:\n%s", data)
	}
}

// TestStateChecksum: a state file changed after GPU Canary wrote it (a
// byte flipped, a torch build edited by hand) is set aside, never
// believed; one of the format that kept no checksum is read once and
// written anew with one.
func TestStateChecksum(t *testing.T) {
	s := Open(t.TempDir())
	st := State{Envs: map[string]EnvRecord{"/w/.venv": {Torch: &pyenv.Package{Version: "2.5.1+cu121", Build: pyenv.BuildCUDA, CUDA: "12.1"}}}}
	if err := s.SaveState(st); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.dir, "state.json")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(string) string{
		"a build edited": func(f string) string { return strings.Replace(f, `"build": "cuda"`, `"build": "cpu"`, 1) },
		"a byte flipped": func(f string) string { return strings.Replace(f, "2.5.1+cu121", "2.5.1+cu122", 1) },
		"the sum edited": func(f string) string {
			i := strings.Index(f, `"sha256": "`) + len(`"sha256": "`)
			return f[:i] + "0" + f[i+1:]
		},
	} {
		t.Run(name, func(t *testing.T) {
			bad := edit(string(good))
			if bad == string(good) {
				t.Fatal("the edit changed nothing")
			}
			if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
				t.Fatal(err)
			}
			got, warn := Open(s.dir).LoadState()
			if warn == nil || len(got.Envs) != 0 {
				t.Fatalf("an edited state file was believed: %+v, %v", got, warn)
			}
			if name != "the sum edited" && !strings.Contains(warn.Error(), "checksum") {
				t.Errorf("warning does not say why: %v", warn)
			}
			os.Remove(path)
		})
	}
	old := `{"format": "gpucanary-state/1", "envs": {"/w/.venv": {"torch": {"version": "2.5.1+cu121", "build": "cuda"}}}}`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	o := Open(s.dir)
	got, warn := o.LoadState()
	if warn != nil || got.Envs["/w/.venv"].Torch == nil || got.Envs["/w/.venv"].Torch.Version != "2.5.1+cu121" {
		t.Fatalf("the unchecked format: %+v, %v", got, warn)
	}
	if err := o.SaveState(got); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), `"format": "gpucanary-state/2"`) || !strings.Contains(string(data), `"sha256"`) {
		t.Errorf("not written anew with a checksum:\n%s", data)
	}
}

func TestBadFilesAreSetAside(t *testing.T) {
	for name, content := range map[string]string{
		"corrupt": `{"format": "gpucanary-state/1", "envs": {`,
		"foreign": `{"name": "something else"}`,
		"binary":  "\x00\x01\x02",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{"state.json", "events.json"} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			s := Open(dir)
			st, warn := s.LoadState()
			if warn == nil || !strings.Contains(warn.Error(), "moved to") {
				t.Fatalf("state warning = %v", warn)
			}
			if len(st.Envs) != 0 {
				t.Fatalf("state from a bad file: %+v", st)
			}
			if err := s.Append(map[string]string{"kind": "ENV_ADDED"}); err == nil || !strings.Contains(err.Error(), "moved to") {
				t.Fatalf("history warning = %v", err)
			}
			matches, _ := filepath.Glob(filepath.Join(dir, "*.corrupt-*"))
			if len(matches) != 2 {
				t.Fatalf("set-aside files: %v", matches)
			}
			for _, m := range matches {
				if data, _ := os.ReadFile(m); string(data) != content {
					t.Errorf("%s lost the original bytes", m)
				}
			}
			evs, _, err := History[map[string]string](Open(dir), HistoryLimit)
			if err != nil || len(evs) != 1 || evs[0]["kind"] != "ENV_ADDED" {
				t.Fatalf("history after set-aside: %v %v", evs, err)
			}
		})
	}
}

func TestHistoryIsBounded(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	type ev struct{ N int }
	for i := 0; i < HistoryLimit+250; i += 50 {
		batch := make([]any, 50)
		for j := range batch {
			batch[j] = ev{N: i + j}
		}
		if err := s.Append(batch...); err != nil {
			t.Fatal(err)
		}
	}
	got, read, err := History[ev](Open(dir), HistoryLimit)
	if err != nil || read.Damaged != 0 {
		t.Fatal(err, read)
	}
	if len(got) != HistoryLimit || got[0].N != HistoryLimit+249 || got[len(got)-1].N != 250 {
		t.Fatalf("history: %d events, newest %d, oldest %d", len(got), got[0].N, got[len(got)-1].N)
	}
	// Both files are JSON Lines, and hold no more than twice the limit.
	lines := 0
	for _, f := range []string{"history.jsonl", "history.1.jsonl"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			var v map[string]json.RawMessage
			if err := json.Unmarshal([]byte(l), &v); err != nil || v["event"] == nil || v["crc32c"] == nil {
				t.Fatalf("%s: a line that is not an event: %q (%v)", f, l, err)
			}
			lines++
		}
	}
	if lines != HistoryLimit+250 {
		t.Errorf("the files hold %d events, want %d", lines, HistoryLimit+250)
	}
}

func TestNoTempFilesLeft(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	for i := 0; i < 5; i++ {
		if err := s.SaveState(State{Envs: map[string]EnvRecord{}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(i); err != nil {
			t.Fatal(err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("files in state dir: %v", names)
	}
}
