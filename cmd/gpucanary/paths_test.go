package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/finding"
)

// badPaths makes one path of each kind that names no environment, and
// what its finding must say.
func badPaths(t *testing.T) (paths []string, says map[string]string) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "requirements.txt")
	if err := os.WriteFile(file, []byte("torch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "project")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nope")
	return []string{missing, file, folder}, map[string]string{
		missing: "nothing exists at that path",
		file:    "it is a file, not a folder",
		folder:  "not a Python environment",
	}
}

// TestCheckReportsEveryBadPath: every path given is read; one that names
// no environment (missing, a file, a plain folder) is an ENV_UNREADABLE
// finding of its own beside the others, and the exit status is 1, as
// for any error finding. Before, a missing path stopped the whole check
// with exit 2 and a file's message named the path twice.
func TestCheckReportsEveryBadPath(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	good := filepath.Join(t.TempDir(), "good")
	if err := writeSpec(good, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	bad, says := badPaths(t)
	sim := simFile(t, simA100)

	out, stderr, code := runCLI(t, append([]string{"--gpu-sim", sim, "check", "--json", good}, bad...)...)
	if code != exitFound || stderr != "" {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	var res struct {
		Envs []struct {
			Path     string            `json:"path"`
			Verdict  string            `json:"verdict"`
			Packages map[string]any    `json:"packages"`
			Findings []finding.Finding `json:"findings"`
		} `json:"envs"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Envs) != 4 || res.Envs[0].Path != good || res.Envs[0].Verdict != "ok" {
		t.Fatalf("envs: %+v", res.Envs)
	}
	for _, e := range res.Envs[1:] {
		want, ok := says[e.Path]
		if !ok || e.Verdict != "error" || len(e.Findings) != 1 || e.Findings[0].Code != finding.CodeEnvUnreadable || e.Findings[0].Env != e.Path {
			t.Errorf("bad path %s: %+v", e.Path, e)
			continue
		}
		if msg := e.Findings[0].Message; !strings.Contains(msg, want) || strings.Count(msg, e.Path) != 1 {
			t.Errorf("%s: finding says %q; want %q, naming the path once", e.Path, msg, want)
		}
		if e.Packages != nil {
			t.Errorf("%s: packages %v; unknown is null", e.Path, e.Packages)
		}
	}

	t.Run("text says what is wrong, not that torch is missing", func(t *testing.T) {
		t.Setenv("NO_COLOR", "1")
		out, _, code := runCLI(t, append([]string{"--gpu-sim", sim, "check"}, bad...)...)
		if code != exitFound || strings.Contains(out, "torch is not installed") || strings.Count(out, "ENV_UNREADABLE") != 3 {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})
	t.Run("good paths only", func(t *testing.T) {
		if _, stderr, code := runCLI(t, "--gpu-sim", sim, "check", good); code != exitOK {
			t.Errorf("exit %d: %s", code, stderr)
		}
	})
	t.Run("fix names what is wrong once", func(t *testing.T) {
		_, stderr, code := runCLI(t, "--gpu-sim", sim, "fix", "--dry-run", bad[1])
		if code != exitUsage || !strings.Contains(stderr, says[bad[1]]) || strings.Count(stderr, bad[1]) != 1 {
			t.Errorf("exit %d: %s", code, stderr)
		}
	})
}

// TestWatchReportsBadPathsAndWatchesTheRest: `watch` prints the finding
// of each bad path first and watches the others; it exits 1 when it
// stops, and at once when no path is left to watch.
func TestWatchReportsBadPathsAndWatchesTheRest(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	good := filepath.Join(t.TempDir(), "good")
	if err := writeSpec(good, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	bad, says := badPaths(t)
	sim := simFile(t, simA100)

	t.Run("no path left", func(t *testing.T) {
		out, _, code := runCLI(t, append([]string{"--gpu-sim", sim, "watch", "--json"}, bad...)...)
		if code != exitFound || strings.Count(out, `"FINDING_RAISED"`) != 3 {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})

	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, append([]string{"--gpu-sim", sim, "watch", "--json", good}, bad...), stdio{in: strings.NewReader(""), out: pw, err: io.Discard})
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	raised := map[string]bool{}
	for sc.Scan() {
		var ev struct {
			Kind    string           `json:"kind"`
			Env     string           `json:"env"`
			Finding *finding.Finding `json:"finding"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		if ev.Kind == "FINDING_RAISED" && ev.Finding != nil && ev.Finding.Code == finding.CodeEnvUnreadable {
			if !strings.Contains(ev.Finding.Message, says[ev.Env]) {
				t.Errorf("%s: %q", ev.Env, ev.Finding.Message)
			}
			raised[ev.Env] = true
		}
		if ev.Kind == "ENV_ADDED" {
			if ev.Env != good || len(raised) != 3 {
				t.Errorf("ENV_ADDED for %s after %d bad paths", ev.Env, len(raised))
			}
			cancel()
		}
	}
	select {
	case c := <-code:
		if c != exitFound {
			t.Errorf("exit %d after Ctrl-C with bad paths given, want 1", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not stop")
	}
}
