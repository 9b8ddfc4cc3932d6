package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
	"github.com/gpucanary/gpucanary/output/text"
)

// TestWatchPrintsJSONLinesAndStopsOnCancel runs `watch --json` as a user
// would: one JSON object a line as things happen, a clean stop on Ctrl-C.
func TestWatchPrintsJSONLinesAndStopsOnCancel(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := filepath.Join(t.TempDir(), "proj", ".venv")
	if err := pyenvtest.Write(env, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--gpu-sim", simFile(t, simA100), "watch", "--json", env}, stdio{in: strings.NewReader(""), out: pw, err: io.Discard})
		pw.Close()
	}()
	lines := make(chan map[string]any, 64)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			var ev map[string]any
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Errorf("not a JSON line: %q", sc.Text())
				continue
			}
			lines <- ev
		}
		close(lines)
	}()
	waitKind := func(kind string) map[string]any {
		t.Helper()
		timeout := time.After(15 * time.Second)
		for {
			select {
			case ev, ok := <-lines:
				if !ok {
					t.Fatalf("watch ended before %s", kind)
				}
				if ev["kind"] == kind {
					return ev
				}
			case <-timeout:
				t.Fatalf("no %s line", kind)
			}
		}
	}
	added := waitKind("ENV_ADDED")
	if added["env"] != env || added["time"] == nil {
		t.Errorf("ENV_ADDED = %v", added)
	}
	// The environment's torch becomes a CPU build.
	time.Sleep(200 * time.Millisecond)
	if err := pyenvtest.Write(env, incidentsSpec("uv-cpu-overwrite")); err != nil {
		t.Fatal(err)
	}
	ev := waitKind("CUDA_WHEEL_REPLACED")
	before, _ := ev["before"].(map[string]any)
	after, _ := ev["after"].(map[string]any)
	if before["cuda"] != "12.1" || after["build"] != "cpu" || !strings.Contains(ev["message"].(string), "→") || ev["fix"] == nil {
		t.Errorf("event = %v", ev)
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit %d after Ctrl-C", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("watch did not stop on cancel")
	}
}

// TestWatchSaysWhatItWatches runs `watch --all` as a person would: it
// first says which GPU it sees and which environments it watches, each
// with how it was found; then every line of an overwrite, FINDING_RAISED
// included, names the environment it is about.
func TestWatchSaysWhatItWatches(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := filepath.Join(t.TempDir(), "proj", ".venv")
	if err := pyenvtest.Write(env, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--gpu-sim", simFile(t, simA100), "watch", "--all", env}, stdio{in: strings.NewReader(""), out: pw, err: io.Discard})
		pw.Close()
	}()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var seen []string
	next := func(match func(string) bool, what string) string {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("watch ended before %s:\n%s", what, strings.Join(seen, "\n"))
				}
				seen = append(seen, l)
				if match(l) {
					return l
				}
			case <-timeout:
				t.Fatalf("no %s:\n%s", what, strings.Join(seen, "\n"))
			}
		}
	}
	is := func(s string) func(string) bool { return func(l string) bool { return l == s } }
	has := func(s string) func(string) bool { return func(l string) bool { return strings.Contains(l, s) } }
	next(is("GPU   driver 550.54.15 · CUDA 12.4 [simulated]"), "the GPU")
	next(is("Watching 1 environment:"), "the summary")
	next(is("  "+env+"  (uv, Python 3.11, named on the command line)  torch 2.5.1+cu121  OK"), "the environment and how it was found")
	if len(seen) != 4 || seen[1] != "  0  NVIDIA A100-SXM4-40GB (Ampere, sm_80) · 40.0 GiB" {
		t.Errorf("the summary is not first:\n%s", strings.Join(seen, "\n"))
	}

	// The environment's torch becomes a CPU build.
	if err := pyenvtest.Write(env, incidentsSpec("uv-cpu-overwrite")); err != nil {
		t.Fatal(err)
	}
	next(has("ENV_ADDED"), "ENV_ADDED, with --all")
	replaced := next(has("CUDA_WHEEL_REPLACED"), "CUDA_WHEEL_REPLACED")
	raised := next(has("FINDING_RAISED"), "FINDING_RAISED")
	for _, l := range []string{replaced, raised} {
		if !strings.Contains(l, "  "+env+"  ") {
			t.Errorf("the line does not name the environment: %q", l)
		}
	}
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("exit %d", c)
	}
}

// startedAt is an engine whose first read is done, with st its state;
// summarized closes once the summary has asked for it.
type startedAt struct {
	st         monitor.State
	summarized chan struct{}
}

func (s startedAt) Started() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
func (s startedAt) State() monitor.State { close(s.summarized); return s.st }

// TestWatchSaysTheStartingListOnce: the first read's ENV_ADDED can still
// be on its way when the summary is printed (it listed two environments
// and then printed ENV_ADDED for one of them); it is not said again, and
// an environment added later is.
func TestWatchSaysTheStartingListOnce(t *testing.T) {
	listed := &pyenv.Env{Path: "/srv/a/.venv", Installer: "pip", Packages: map[string]*pyenv.Package{}}
	st := monitor.State{GPU: gpu.State{}, DiscoveryComplete: true, Envs: []monitor.EnvReport{{Env: listed, Verdict: monitor.VerdictNoTorch}}}
	engine := startedAt{st: st, summarized: make(chan struct{})}
	events := make(chan monitor.Event)
	go func() {
		<-engine.summarized // both arrive after the summary, as the late one did
		events <- monitor.Event{Kind: monitor.KindEnvAdded, Env: "/srv/a/.venv", Message: "Watching /srv/a/.venv (no torch)."}
		events <- monitor.Event{Kind: monitor.KindEnvAdded, Env: "/srv/b/.venv", Message: "New environment /srv/b/.venv (no torch)."}
		close(events)
	}()
	var b strings.Builder
	printWatch(text.Printer{W: &b}, engine, events, false)
	got := b.String()
	if strings.Count(got, "/srv/a/.venv") != 1 || !strings.Contains(got, "New environment /srv/b/.venv (no torch).") {
		t.Errorf("got:\n%s", got)
	}
}
