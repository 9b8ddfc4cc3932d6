package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// healthSim is what the simulated RTX A6000 says while the test runs; a
// writer rewrites the scenario file from it every 50ms, the HW thermal
// counter growing by half the time since the last write while throttling
// is on (so however slowly a loaded machine runs the writer, it is 50 %).
type healthSim struct {
	mu         sync.Mutex
	throttling bool
	hwThermal  uint64
	pcieGen    int
	lost       bool
	xids       []int
	dbe        int
	written    time.Time
	last       time.Time // the last write, by the wall clock
}

func (h *healthSim) set(f func(*healthSim)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(h)
}

// write writes the scenario as it stands, with a modification time later
// than the last, so the backend sees every change.
func (h *healthSim) write(t *testing.T, path string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	if h.throttling && !h.last.IsZero() {
		h.hwThermal += uint64(now.Sub(h.last) / 2)
	}
	h.last = now
	var xs []string
	for _, x := range h.xids {
		xs = append(xs, fmt.Sprintf(`{"xid": %d}`, x))
	}
	// Under load at its power cap, as a GeForce trains: sw_power_cap
	// alone never makes GPU_THROTTLED.
	data := fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA RTX A6000", "uuid": "GPU-a6000", "compute_capability": "8.6", "memory_total_bytes": 51539607552,
  "utilization_gpu_percent": 97, "temperature_c": 86, "power_watts": 299, "power_limit_watts": 300,
  "clocks_event_reasons": ["sw_power_cap"], "throttle_ns": {"hw_thermal": %d}, "margin_temperature_c": 9,
  "pcie": {"gen": %d, "width": 16, "max_gen": 4, "max_width": 16, "replays": 0},
  "ecc": {"volatile_dbe": %d, "retired_pending": false},
  "xid_events": [%s], "lost": %v}]}`, h.hwThermal, h.pcieGen, h.dbe, strings.Join(xs, ", "), h.lost)
	writeScenario(t, path, data, &h.written)
}

// TestWatchGPUHealthJSON runs `watch --json` on a simulated GPU whose
// scenario the test rewrites, with the settings' windows short: each GPU
// health code is raised and then cleared, about gpu:0, and nothing is
// raised for the power cap the GPU runs at throughout.
func TestWatchGPUHealthJSON(t *testing.T) {
	settings := `refresh = "100ms"` + "\n" + `throttle_window = "1s"` + "\n" + `pcie_window = "500ms"` + "\n" + `xid_hold = "1s"` + "\n"
	sim := &healthSim{pcieGen: 4}
	w := startSimWatch(t, settings, sim.write)
	// wait returns the next line of kind about a finding with code, which
	// must be about gpu:0.
	wait := func(kind, code string) map[string]any {
		t.Helper()
		ev := w.wait(t, kind, code)
		if f := ev["finding"].(map[string]any); f["env"] != "gpu:0" {
			t.Errorf("%s %s is about %v, want gpu:0", kind, code, f["env"])
		}
		return ev
	}
	raised := func(code string, sev finding.Severity, says string) {
		t.Helper()
		ev := wait("FINDING_RAISED", code)
		f := ev["finding"].(map[string]any)
		if f["severity"] != string(sev) || !strings.Contains(ev["message"].(string), says) || ev["notify"] != true {
			t.Errorf("%s raised: %v", code, ev)
		}
	}

	sim.set(func(h *healthSim) { h.throttling = true })
	raised(finding.CodeGPUThrottled, finding.SeverityWarning, "HW thermal slowdown")
	sim.set(func(h *healthSim) { h.throttling = false })
	wait("FINDING_CLEARED", finding.CodeGPUThrottled)

	sim.set(func(h *healthSim) { h.pcieGen = 3 })
	raised(finding.CodePCIeDegraded, finding.SeverityWarning, "Gen3 x16 under load")
	sim.set(func(h *healthSim) { h.pcieGen = 4 })
	wait("FINDING_CLEARED", finding.CodePCIeDegraded)

	sim.set(func(h *healthSim) { h.dbe = 1 })
	raised(finding.CodeGPUMemoryErrors, finding.SeverityError, "reset or reboot needed")
	sim.set(func(h *healthSim) { h.dbe = 0 })
	wait("FINDING_CLEARED", finding.CodeGPUMemoryErrors)

	sim.set(func(h *healthSim) { h.xids = append(h.xids, 79) })
	raised(finding.CodeGPUXid, finding.SeverityError, "Xid 79")
	wait("FINDING_CLEARED", finding.CodeGPUXid)

	sim.set(func(h *healthSim) { h.lost = true })
	raised(finding.CodeGPULost, finding.SeverityError, "has stopped answering the driver")
	sim.set(func(h *healthSim) { h.lost = false })
	wait("FINDING_CLEARED", finding.CodeGPULost)

	w.stop(t)
	for _, s := range w.seen {
		if strings.HasPrefix(s, "FINDING_RAISED") && strings.Count(strings.Join(w.seen, "|"), s) > 1 {
			t.Errorf("%s more than once: %v", s, w.seen)
			break
		}
	}
}

// simLostAndECC is two GPUs: one off the bus, one with a double-bit ECC
// error and a slot that holds its link to x8.
const simLostAndECC = `{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA GeForce RTX 4090", "uuid": "GPU-lost", "compute_capability": "8.9", "memory_total_bytes": 25757220864, "lost": true},
             {"name": "NVIDIA RTX A6000", "uuid": "GPU-a6000", "compute_capability": "8.6", "memory_total_bytes": 51539607552,
              "pcie": {"gen": 4, "width": 8, "max_gen": 4, "max_width": 8}, "ecc": {"volatile_dbe": 1}}]}`

// TestCheckAndPsSayGPUHealthState: what one reading tells (a lost GPU,
// memory errors, a slot-limited link) is on check's GPU line and in its
// findings, check exits 1 for them, and ps --json carries them.
func TestCheckAndPsSayGPUHealthState(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := filepath.Join(t.TempDir(), ".venv")
	if err := pyenvtest.Write(env, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	sim := simFile(t, simLostAndECC)
	out, _, code := runCLI(t, "--gpu-sim", sim, "check", env)
	for _, says := range []string{"NVIDIA GeForce RTX 4090", "lost (not answering the driver)", "GPU_LOST", "GPU_MEMORY_ERRORS", "reset or reboot needed", "PCIE_DEGRADED", "its slot allows at most Gen4 x8"} {
		if !strings.Contains(out, says) {
			t.Errorf("check does not say %q:\n%s", says, out)
		}
	}
	if code != 1 {
		t.Errorf("check exit %d, want 1 for the error findings", code)
	}
	var res struct {
		Findings []finding.Finding `json:"findings"`
	}
	out, _, _ = runCLI(t, "--gpu-sim", sim, "check", "--json", env)
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range res.Findings {
		got[f.Code+" "+f.Env] = string(f.Severity)
	}
	want := map[string]string{"GPU_LOST gpu:0": "error", "GPU_MEMORY_ERRORS gpu:1": "error", "PCIE_DEGRADED gpu:1": "info"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("check --json: %s is %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	out, _, _ = runCLI(t, "--gpu-sim", sim, "ps", "--json")
	for _, says := range []string{`"GPU_LOST"`, `"GPU_MEMORY_ERRORS"`, `"lost": true`} {
		if !strings.Contains(out, says) {
			t.Errorf("ps --json does not carry %s:\n%s", says, out)
		}
	}
}
