//go:build linux

// Package soak runs GPU Canary's engine the way a busy machine does, for
// as long as it takes memory to show a leak: `watch --json` over 100
// environments while real pip flips torch in 5 of them every second. It
// is issue 41's soak (every flip caught; the engine's RSS at the end
// within 10 MB of its RSS after 2 minutes), run by `make soak`
// (scripts/soak.sh); `go test` alone skips it.
package soak

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
	"github.com/gpucanary/gpucanary/monitor/store"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// settings are the soak's knobs, from the environment (scripts/soak.sh
// sets them; the defaults are the issue's).
type settings struct {
	bin       string        // GPUCANARY_SOAK_BIN: the gpucanary to run
	duration  time.Duration // GPUCANARY_SOAK_DURATION: how long pip flips torch
	baseline  time.Duration // GPUCANARY_SOAK_BASELINE: when the RSS to compare with is taken
	envs      int           // GPUCANARY_SOAK_ENVS: environments watched
	flipped   int           // GPUCANARY_SOAK_FLIPPED: of them, flipped by pip
	growthMiB float64       // GPUCANARY_SOAK_GROWTH_MIB: the RSS growth allowed after the baseline
	seed      int           // GPUCANARY_SOAK_SEED: events in the history before watch starts
}

func readSettings(t *testing.T) settings {
	s := settings{bin: os.Getenv("GPUCANARY_SOAK_BIN"), duration: 10 * time.Minute, baseline: 2 * time.Minute, envs: 100, flipped: 5, growthMiB: 10, seed: 2 * store.HistoryLimit}
	if s.bin == "" {
		t.Skip("the soak runs for 10 minutes: make soak (GPUCANARY_SOAK_BIN names the gpucanary to run)")
	}
	for name, d := range map[string]*time.Duration{"GPUCANARY_SOAK_DURATION": &s.duration, "GPUCANARY_SOAK_BASELINE": &s.baseline} {
		if v := os.Getenv(name); v != "" {
			var err error
			if *d, err = time.ParseDuration(v); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	for name, n := range map[string]*int{"GPUCANARY_SOAK_ENVS": &s.envs, "GPUCANARY_SOAK_FLIPPED": &s.flipped, "GPUCANARY_SOAK_SEED": &s.seed} {
		if v := os.Getenv(name); v != "" {
			var err error
			if *n, err = strconv.Atoi(v); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	if v := os.Getenv("GPUCANARY_SOAK_GROWTH_MIB"); v != "" {
		var err error
		if s.growthMiB, err = strconv.ParseFloat(v, 64); err != nil {
			t.Fatalf("GPUCANARY_SOAK_GROWTH_MIB: %v", err)
		}
	}
	return s
}

// flipVersions are what pip flips torch between: a CUDA torch replaced
// by a CPU one (CUDA_WHEEL_REPLACED) and back (TORCH_CHANGED).
var flipVersions = [2]string{"2.5.1+cu121", "2.5.1+cpu"}

func TestSoak(t *testing.T) {
	cfg := readSettings(t)
	torches := monitortest.NewTorches(t)
	py := wheeltest.Python(t)
	links := torches.Links()
	root := t.TempDir()
	var paths, flipped []string
	for i := range cfg.flipped {
		p := filepath.Join(root, fmt.Sprintf("flip-%d", i))
		torches.Venv(t, p) // torch 2.5.1+cu121, installed by real pip
		flipped = append(flipped, p)
	}
	for i := range cfg.envs - cfg.flipped {
		p := filepath.Join(root, fmt.Sprintf("still-%02d", i))
		if err := pyenvtest.Write(p, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1"}}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	paths = append(paths, flipped...)

	home := t.TempDir()
	state := filepath.Join(home, "state")
	// The history starts full, as a machine's does after weeks: every
	// event of the soak is appended to a history at its longest (the
	// old store rewrote all of it per event), and the log turns over.
	seeded := store.Open(filepath.Join(state, "gpucanary"))
	for i := 0; i < cfg.seed; i += 100 {
		var batch []any
		for j := i; j < min(i+100, cfg.seed); j++ {
			batch = append(batch, monitor.Event{Time: time.Now().Add(-time.Hour), Kind: monitor.KindTorchChanged, Env: flipped[j%len(flipped)],
				Message: fmt.Sprintf("seed event %d: torch changed from 2.5.1+cu121 to 2.5.1+cpu (pip)", j)})
		}
		if err := seeded.Append(batch...); err != nil {
			t.Fatal(err)
		}
	}
	w := exec.Command(cfg.bin, append([]string{"watch", "--json", "--all"}, paths...)...)
	w.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+state, "XDG_CACHE_HOME="+filepath.Join(home, "cache"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"))
	var stderr bytes.Buffer
	w.Stderr = &stderr
	out, err := w.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			w.Process.Kill()
			w.Wait()
		}
	}()

	// Every torch change of a flipped environment goes to its channel;
	// the first line printed says the engine has read everything once.
	changes := map[string]chan string{}
	for _, p := range flipped {
		changes[p] = make(chan string, 1024)
	}
	first := make(chan struct{})
	var counts sync.Map // kind -> *int64 (printed at the end)
	var readWG sync.WaitGroup
	readWG.Add(1)
	go func() {
		defer readWG.Done()
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		once := sync.Once{}
		for sc.Scan() {
			once.Do(func() { close(first) })
			var e monitor.Event
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				continue
			}
			n, _ := counts.LoadOrStore(e.Kind, new(int))
			*n.(*int)++
			if c, ok := changes[e.Env]; ok && (e.Kind == monitor.KindCUDAWheelReplaced || e.Kind == monitor.KindTorchChanged) && e.After != nil {
				c <- e.After.Version
			}
		}
		once.Do(func() { close(first) })
	}()
	select {
	case <-first:
	case <-time.After(3 * time.Minute):
		t.Fatalf("watch printed nothing in 3 minutes; stderr:\n%s", stderr.String())
	}
	// The first read's events are printed as one batch once the engine
	// has read everything: from here on, what pip changes is a change.
	time.Sleep(2 * time.Second)

	start := time.Now()
	var mu sync.Mutex
	flips, caught, missed := 0, 0, 0
	var wg sync.WaitGroup
	for _, env := range flipped {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cur := 0
			for time.Since(start) < cfg.duration {
				began := time.Now()
				next := 1 - cur
				cmd := wheeltest.PipCommand(py, env, "install", "--no-index", "--find-links", links, "--no-deps", "--no-compile", "--disable-pip-version-check", "--quiet", "torch=="+flipVersions[next])
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("pip flipping %s to %s: %v\n%s", env, flipVersions[next], err, out)
					return
				}
				cur = next
				mu.Lock()
				flips++
				mu.Unlock()
				// The flip is caught when the engine says torch is now
				// what pip installed; a minute is far beyond the
				// watcher's settle time, even on a loaded machine.
				ok := false
				deadline := time.After(time.Minute)
			wait:
				for {
					select {
					case v := <-changes[env]:
						if v == flipVersions[cur] {
							ok = true
							break wait
						}
					case <-deadline:
						break wait
					}
				}
				mu.Lock()
				if ok {
					caught++
				} else {
					missed++
					t.Errorf("%s: the flip to %s at %s was not reported within a minute", env, flipVersions[cur], began.Format(time.TimeOnly))
				}
				mu.Unlock()
				time.Sleep(time.Until(began.Add(time.Second)))
			}
		}()
	}

	// The RSS is sampled every 5 seconds; the baseline is the first
	// sample after cfg.baseline.
	var baseline, last, peak int64
	sample := time.NewTicker(5 * time.Second)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	lastLog := time.Now()
sampling:
	for {
		select {
		case <-done:
			break sampling
		case <-sample.C:
			rss, err := rssKiB(w.Process.Pid)
			if err != nil {
				t.Fatalf("reading the engine's RSS: %v\nstderr:\n%s", err, stderr.String())
			}
			last, peak = rss, max(peak, rss)
			if baseline == 0 && time.Since(start) >= cfg.baseline {
				baseline = rss
				t.Logf("baseline at %s: RSS %.1f MiB", time.Since(start).Round(time.Second), float64(rss)/1024)
			}
			if time.Since(lastLog) >= 30*time.Second {
				mu.Lock()
				t.Logf("%s: RSS %.1f MiB, %d flips, %d caught, %d missed", time.Since(start).Round(time.Second), float64(rss)/1024, flips, caught, missed)
				mu.Unlock()
				lastLog = time.Now()
			}
		}
	}
	sample.Stop()
	if rss, err := rssKiB(w.Process.Pid); err == nil {
		last, peak = rss, max(peak, rss)
	}
	w.Process.Signal(os.Interrupt)
	w.Wait()
	stopped = true
	readWG.Wait()

	var kinds []string
	counts.Range(func(k, v any) bool { kinds = append(kinds, fmt.Sprintf("%s=%d", k, *v.(*int))); return true })
	t.Logf("%d environments, %d flipped by pip for %s: %d flips, %d caught, %d missed; events printed: %s",
		cfg.envs, cfg.flipped, cfg.duration, flips, caught, missed, strings.Join(kinds, " "))
	t.Logf("RSS: %.1f MiB after %s, %.1f MiB at the end (peak %.1f MiB): %+.1f MiB",
		float64(baseline)/1024, cfg.baseline, float64(last)/1024, float64(peak)/1024, float64(last-baseline)/1024)
	if flips == 0 || missed > 0 || caught != flips {
		t.Errorf("%d flips, %d caught, %d missed: every flip must be caught", flips, caught, missed)
	}
	if baseline == 0 {
		t.Errorf("the soak ended before the baseline was taken (%s)", cfg.baseline)
	} else if growth := float64(last-baseline) / 1024; growth > cfg.growthMiB {
		t.Errorf("the engine's RSS grew by %.1f MiB after the baseline, over %.0f MiB", growth, cfg.growthMiB)
	}

	// The history kept what it was given: the newest thousand events
	// read back whole, the flips among them.
	hist, read, err := store.History[monitor.Event](store.Open(filepath.Join(state, "gpucanary")), store.HistoryLimit)
	if err != nil || read.Damaged > 0 {
		t.Errorf("reading the history back: %v, %d damaged lines", err, read.Damaged)
	}
	if want := min(store.HistoryLimit, flips+cfg.seed); len(hist) < want {
		t.Errorf("the history holds %d events, want at least %d", len(hist), want)
	}
	recorded := 0
	for _, e := range hist {
		if _, ok := changes[e.Env]; ok && (e.Kind == monitor.KindCUDAWheelReplaced || e.Kind == monitor.KindTorchChanged) && !strings.HasPrefix(e.Message, "seed event") {
			recorded++
		}
	}
	// Every flip is there when what was read reaches back to the seed.
	if reaches := len(hist) > 0 && strings.HasPrefix(hist[len(hist)-1].Message, "seed event"); reaches && recorded != flips {
		t.Errorf("the history records %d of the %d flips", recorded, flips)
	}
	for _, f := range []string{"history.jsonl", "history.1.jsonl"} {
		if fi, err := os.Stat(filepath.Join(state, "gpucanary", f)); err == nil {
			t.Logf("%s: %d bytes", f, fi.Size())
		}
	}
	if t.Failed() {
		t.Logf("watch's stderr:\n%s", stderr.String())
	}
}

// rssKiB is the resident set of process pid, in KiB (/proc/PID/status's
// VmRSS).
func rssKiB(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
