//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/output/words"
)

// trainingSim is what the simulated RTX A6000 says while the tray test
// runs: a real process trains on it at its power cap (as a GeForce or a
// workstation card trains: never GPU_THROTTLED), and the test turns on one
// trouble at a time. A writer rewrites the scenario from it every 100ms.
type trainingSim struct {
	mu                         sync.Mutex
	pid                        int
	util                       int
	power                      float64
	throttling, lost, spilling bool
	pcieGen, dbe, resets       int
	xids                       []int
	hwThermal, shared          uint64
	last, written              time.Time
}

func (s *trainingSim) set(f func(*trainingSim)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *trainingSim) write(t *testing.T, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.throttling && !s.last.IsZero() {
		s.hwThermal += uint64(now.Sub(s.last) / 2) // held back half the time
	}
	s.last = now
	used := uint64(12 << 30)
	if s.spilling {
		used = 51539607552 / 100 * 99 // 99 % of its 48 GiB
		s.shared = max(s.shared, 600<<20) + 10<<20
	} else {
		s.shared = 16 << 20
	}
	var xs []string
	for _, x := range s.xids {
		xs = append(xs, fmt.Sprintf(`{"xid": %d}`, x))
	}
	resets := strings.TrimSuffix(strings.Repeat(`{"driver": "nvlddmkm"}, `, s.resets), ", ")
	data := fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4", "driver_resets": [%s],
 "devices": [{"name": "NVIDIA RTX A6000", "uuid": "GPU-a6000", "compute_capability": "8.6", "memory_total_bytes": 51539607552,
  "memory_used_bytes": %d, "utilization_gpu_percent": %d, "temperature_c": 80, "power_watts": %g, "power_limit_watts": 300,
  "clocks_event_reasons": ["sw_power_cap"], "throttle_ns": {"hw_thermal": %d}, "margin_temperature_c": 9,
  "pcie": {"gen": %d, "width": 16, "max_gen": 4, "max_width": 16, "replays": 0},
  "ecc": {"volatile_dbe": %d, "retired_pending": false}, "xid_events": [%s], "lost": %v,
  "processes": [{"pid": %d, "used_memory_bytes": 2147483648, "shared_memory_bytes": %d}]}]}`,
		resets, used, s.util, s.power, s.hwThermal, s.pcieGen, s.dbe, strings.Join(xs, ", "), s.lost, s.pid, s.shared)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Error(err)
		return
	}
	// A later modification time each write: the backend rereads a file
	// that changed.
	if s.written = s.written.Add(time.Second); s.written.Before(now) {
		s.written = now.Add(time.Second)
	}
	os.Chtimes(tmp, s.written, s.written)
	if err := os.Rename(tmp, path); err != nil {
		t.Error(err)
	}
}

// TestTrayTellsTrainingTrouble: the tray, on a simulated GPU a real
// process trains on, tells each trouble of a training run as a desktop
// notification (seen on the session bus, shown by dunst) when the test
// turns it on in the scenario, and that it was resolved when it is turned
// off: throttling, a degraded PCIe link, memory errors, an Xid, a lost GPU,
// a spill into system memory, a driver reset, a stalled and a spinning
// job. Training at the power cap throughout tells nothing.
func TestTrayTellsTrainingTrouble(t *testing.T) {
	bin := desktopBin(t)
	home := t.TempDir()
	job := exec.Command("sleep", "600")
	if err := job.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { job.Process.Kill(); job.Wait() })
	cfg := filepath.Join(home, ".config", "gpucanary", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	settings := "refresh = \"100ms\"\nthrottle_window = \"1s\"\npcie_window = \"500ms\"\nxid_hold = \"1s\"\nspill_window = \"1s\"\n" +
		"stall_window = \"1s\"\nstall_arm_after = \"1ms\"\njob_min_runtime = \"1h\"\ndiscover_home = false\n"
	if err := os.WriteFile(cfg, []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	scenario := filepath.Join(t.TempDir(), "gpu.json")
	sim := &trainingSim{pid: job.Process.Pid, util: 97, power: 299, pcieGen: 4}
	sim.write(t, scenario)
	stop := make(chan struct{})
	writing := make(chan struct{})
	go func() {
		defer close(writing)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				sim.write(t, scenario)
			}
		}
	}()
	defer func() { close(stop); <-writing }()

	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	notes := watchNotifyActions(t)
	exec.Command("dunstctl", "close-all").Run() // earlier tests' bubbles
	cmd := exec.Command(bin, "--gpu-sim", scenario)
	cmd.Env = homeEnviron(home)
	startTray(t, conn, cmd)

	var seen []string
	// Training at its power cap over three throttle windows tells nothing
	// about the GPU (a slow machine only makes this check weaker).
	time.Sleep(3 * time.Second)
	for len(notes) > 0 {
		n := <-notes
		seen = append(seen, n.summary)
		if strings.Contains(n.summary, "GPU 0") {
			t.Errorf("training at the power cap was told: %q %q", n.summary, n.body)
		}
	}
	// next waits for a notification whose title holds title.
	next := func(what, title string) notifyCall {
		t.Helper()
		deadline := time.After(60 * time.Second)
		for {
			select {
			case n := <-notes:
				seen = append(seen, n.summary)
				if strings.Contains(n.summary, title) {
					return n
				}
			case <-deadline:
				t.Fatalf("no notification %q for %s within 60s; saw %q", title, what, seen)
			}
		}
	}
	gpuTitle := func(code string) string { return "GPU 0: " + words.CodeTitle(code) }
	for _, step := range []struct {
		code      string
		title     string
		on, off   func(*trainingSim)
		clearedBy string // the title that says it was resolved
	}{
		{finding.CodeGPUThrottled, gpuTitle(finding.CodeGPUThrottled),
			func(s *trainingSim) { s.throttling = true }, func(s *trainingSim) { s.throttling = false }, "Resolved: GPU 0"},
		{finding.CodePCIeDegraded, gpuTitle(finding.CodePCIeDegraded),
			func(s *trainingSim) { s.pcieGen = 3 }, func(s *trainingSim) { s.pcieGen = 4 }, "Resolved: GPU 0"},
		{finding.CodeGPUMemoryErrors, gpuTitle(finding.CodeGPUMemoryErrors),
			func(s *trainingSim) { s.dbe = 1 }, func(s *trainingSim) { s.dbe = 0 }, "Resolved: GPU 0"},
		{finding.CodeGPUXid, gpuTitle(finding.CodeGPUXid),
			func(s *trainingSim) { s.xids = append(s.xids, 79) }, func(*trainingSim) {}, "Resolved: GPU 0"},
		{finding.CodeGPULost, gpuTitle(finding.CodeGPULost),
			func(s *trainingSim) { s.lost = true }, func(s *trainingSim) { s.lost = false }, "Resolved: GPU 0"},
		{finding.CodeVRAMSpill, gpuTitle(finding.CodeVRAMSpill),
			func(s *trainingSim) { s.spilling = true }, func(s *trainingSim) { s.spilling = false }, "Resolved: GPU 0"},
		{finding.CodeDriverReset, words.CodeTitle(finding.CodeDriverReset),
			func(s *trainingSim) { s.resets++ }, func(*trainingSim) {}, "Resolved"},
		{finding.CodeJobStalled, "A GPU job stalled",
			func(s *trainingSim) { s.util = 0 }, func(s *trainingSim) { s.util = 97 }, "Resolved"},
		{finding.CodeJobSpinning, "A GPU job spins without progress",
			func(s *trainingSim) { s.util, s.power = 99, 30 }, func(s *trainingSim) { s.util, s.power = 97, 299 }, "Resolved"},
	} {
		sim.set(step.on)
		next(step.code, step.title)
		sim.set(step.off)
		next(step.code+" cleared", step.clearedBy)
	}
}
