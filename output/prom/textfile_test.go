package prom

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gpucanary/gpucanary/monitor"
)

func TestWriteTextfile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gpucanary.prom")
	reg := NewRegistry(Options{State: func() monitor.State { return replacedState() }, Version: "v1.2.3", GoVersion: "go1.24.0"})
	for range 2 { // a second write replaces the first
		if err := WriteTextfile(path, reg); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "replaced.prom"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the textfile differs from the scrape of the same state:\n%s", got)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 so node_exporter can read it", fi.Mode().Perm())
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("temporary files left beside the textfile: %v", left)
	}
	err = WriteTextfile(filepath.Join(dir, "no", "such", "dir", "x.prom"), reg)
	if err == nil || !strings.Contains(err.Error(), "no/such/dir/x.prom") {
		t.Errorf("writing into a missing folder: %v, want an error naming the path", err)
	}
}

// node_exporter may read the file at any moment: it must always find a
// whole exposition, the old one or the new one, never half of either.
func TestTextfileIsNeverSeenHalfWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpucanary.prom")
	big := replacedState()
	for i := range 300 {
		e := env(filepath.Join("/srv/envs", strings.Repeat("x", i%40), "venv"+string(rune('a'+i%26))+strings.Repeat("y", i)), "uv", nil)
		big.Envs = append(big.Envs, e)
	}
	reg := NewRegistry(Options{State: func() monitor.State { return big }})
	if err := WriteTextfile(path, reg); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var reads, bad atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			b, err := os.ReadFile(path)
			if err != nil {
				bad.Add(1)
				continue
			}
			reads.Add(1)
			p := expfmt.NewTextParser(model.LegacyValidation)
			mfs, err := p.TextToMetricFamilies(bytes.NewReader(b))
			if err != nil || mfs["gpucanary_watch_degraded"] == nil || len(mfs["gpucanary_env_info"].GetMetric()) != len(big.Envs) {
				bad.Add(1)
			}
		}
	}()
	for range 100 {
		if err := WriteTextfile(path, reg); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if bad.Load() > 0 {
		t.Errorf("%d of %d reads found a missing or partial file", bad.Load(), reads.Load()+bad.Load())
	}
}

func TestKeepTextfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpucanary.prom")
	var state atomic.Pointer[monitor.State]
	s := noDriverState()
	state.Store(&s)
	var ready atomic.Bool
	changes := make(chan monitor.Event)
	done := make(chan struct{})
	go func() {
		defer close(done)
		KeepTextfile(context.Background(), TextfileOptions{Path: path, Ready: ready.Load, Changes: changes, Every: time.Hour,
			Gatherer: NewRegistry(Options{State: func() monitor.State { return *state.Load() }})})
	}()
	waitFor := func(what string, cond func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			b, _ := os.ReadFile(path)
			if cond(string(b)) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30s; the file holds:\n%s", what, b)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	changes <- monitor.Event{Kind: monitor.KindEnvAdded} // taken while not ready
	if _, err := os.Stat(path); err == nil {
		t.Fatal("the textfile was written before the engine's first read")
	}
	ready.Store(true)
	waitFor("the first write once ready", func(s string) bool { return strings.Contains(s, `env="/home/bo/.venv"`) })

	next := replacedState()
	state.Store(&next)
	changes <- monitor.Event{Kind: monitor.KindCUDAWheelReplaced}
	waitFor("a rewrite after an event", func(s string) bool {
		return strings.Contains(s, `gpucanary_env_torch_replaced_timestamp_seconds{env="/home/ana/vision/.venv"}`)
	})

	close(changes) // the engine stopped
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("KeepTextfile did not return after the engine's events ended")
	}
}

func TestKeepTextfileStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		KeepTextfile(ctx, TextfileOptions{Path: filepath.Join(t.TempDir(), "x.prom"), Ready: func() bool { return false },
			Changes: make(chan monitor.Event), Gatherer: NewRegistry(Options{State: noDriverState})})
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("KeepTextfile did not return after its context ended")
	}
}
