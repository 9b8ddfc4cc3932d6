package health

import (
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

func p[T any](v T) *T { return &v }

// card is a loaded RTX A6000 at util %; change edits it.
func card(util uint32, change ...func(*gpu.Device)) gpu.Device {
	d := gpu.Device{Index: 0, Name: "NVIDIA RTX A6000", UUID: "GPU-a6000", UtilizationGPU: p(util),
		TemperatureC: p(uint32(84)), PowerWatts: p(291.4), PowerLimitWatts: p(300.0)}
	for _, c := range change {
		c(&d)
	}
	return d
}

func state(ds ...gpu.Device) gpu.State { return gpu.State{Driver: "550.54.15", Devices: ds} }

// run feeds a watch one snapshot every step for steps, each made by at
// (the step's index), and returns the findings after the last.
func run(w *GPUWatch, start time.Time, step time.Duration, steps int, at func(i int) gpu.State) (all, fresh []finding.Finding) {
	for i := range steps {
		all, fresh = w.Observe(start.Add(time.Duration(i)*step), at(i))
	}
	return all, fresh
}

func codes(fs []finding.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Code+"/"+string(f.Severity))
	}
	return out
}

// only checks that fs are exactly one finding of code and severity whose
// message holds says, or none when code is "".
func only(t *testing.T, fs []finding.Finding, code string, sev finding.Severity, says ...string) {
	t.Helper()
	if code == "" {
		if len(fs) != 0 {
			t.Errorf("findings = %v, want none: %s", codes(fs), fs[0].Message)
		}
		return
	}
	if len(fs) != 1 || fs[0].Code != code || fs[0].Severity != sev {
		t.Fatalf("findings = %v, want one %s/%s", codes(fs), code, sev)
	}
	for _, s := range says {
		if !strings.Contains(fs[0].Message, s) {
			t.Errorf("message %q does not say %q", fs[0].Message, s)
		}
	}
	if fs[0].Env != "gpu:0" {
		t.Errorf("env = %q", fs[0].Env)
	}
}

var t0 = time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)

func TestGPUThrottled(t *testing.T) {
	const step = 2 * time.Second
	// counter grows ns of throttle per step: 300ms of 2s is 15 %.
	counter := func(util uint32, perStep time.Duration, set func(*gpu.Throttle, *uint64)) func(int) gpu.State {
		return func(i int) gpu.State {
			return state(card(util, func(d *gpu.Device) {
				d.Throttle = &gpu.Throttle{}
				set(d.Throttle, p(uint64(i)*uint64(perStep)))
			}))
		}
	}
	hwThermal := func(t *gpu.Throttle, v *uint64) { t.HWThermal = v }
	reasons := func(util uint32, every int, rs ...string) func(int) gpu.State {
		return func(i int) gpu.State {
			return state(card(util, func(d *gpu.Device) {
				if i%every == 0 {
					d.ClocksEventReasons = rs
				}
			}))
		}
	}
	tests := []struct {
		name  string
		steps int
		at    func(int) gpu.State
		code  string
		says  []string
	}{
		{"HW thermal counter 15% of the minute", 31, counter(95, 300*time.Millisecond, hwThermal), finding.CodeGPUThrottled,
			[]string{"GPU 0 (NVIDIA RTX A6000) is slowing down under load", "HW thermal slowdown 15% of the last 60 s", "84 °C", "291 W of 300 W", "cooling"}},
		{"the window not yet covered", 30, counter(95, 300*time.Millisecond, hwThermal), "", nil},
		{"HW thermal counter 5%", 31, counter(95, 100*time.Millisecond, hwThermal), "", nil},
		{"power brake counter", 31, counter(60, time.Second, func(t *gpu.Throttle, v *uint64) { t.HWPowerBrake = v }), finding.CodeGPUThrottled,
			[]string{"HW power brake 50%", "power supply"}},
		{"SW thermal counter", 31, counter(60, time.Second, func(t *gpu.Throttle, v *uint64) { t.SWThermal = v }), finding.CodeGPUThrottled,
			[]string{"SW thermal slowdown 50%"}},
		{"idle: counters growing say nothing", 31, counter(10, time.Second, hwThermal), "", nil},
		{"SW power cap all the time under load says nothing", 31, reasons(99, 1, gpu.ReasonSWPowerCap), "", nil},
		{"GPU idle reason says nothing", 31, reasons(0, 1, gpu.ReasonGPUIdle), "", nil},
		{"sampled HW slowdown in a fifth of the polls", 31, reasons(90, 5, gpu.ReasonHWSlowdown, gpu.ReasonSWPowerCap), finding.CodeGPUThrottled,
			[]string{"HW slowdown 20% of the last 60 s", "PSU"}},
		{"sampled HW slowdown once (a P-state change)", 31, reasons(90, 40, gpu.ReasonHWSlowdown), "", nil},
		{"load dropped once in the window", 31, func(i int) gpu.State {
			s := counter(95, time.Second, hwThermal)(i)
			if i == 20 {
				s.Devices[0].UtilizationGPU = p(uint32(3))
			}
			return s
		}, "", nil},
		{"a counter that went back (driver reloaded)", 31, func(i int) gpu.State {
			s := counter(95, time.Second, hwThermal)(i)
			if i == 30 {
				*s.Devices[0].Throttle.HWThermal = 0
			}
			return s
		}, "", nil},
		{"margin 3 °C under load", 1, func(int) gpu.State {
			return state(card(80, func(d *gpu.Device) { d.MarginTemperatureC = p(int32(3)) }))
		},
			finding.CodeGPUThrottled, []string{"3 °C from its slowdown temperature"}},
		{"margin 4 °C under load", 1, func(int) gpu.State {
			return state(card(80, func(d *gpu.Device) { d.MarginTemperatureC = p(int32(4)) }))
		}, "", nil},
		{"margin 1 °C idle", 1, func(int) gpu.State {
			return state(card(20, func(d *gpu.Device) { d.MarginTemperatureC = p(int32(1)) }))
		}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all, _ := run(NewGPUWatch(GPUWatchOptions{}), t0, step, tt.steps, tt.at)
			only(t, all, tt.code, finding.SeverityWarning, tt.says...)
		})
	}
}

// TestGPUThrottledClears: once the counter stops growing for a window,
// the finding is gone.
func TestGPUThrottledClears(t *testing.T) {
	w := NewGPUWatch(GPUWatchOptions{ThrottleWindow: time.Second})
	var ns uint64
	at := func(i int) gpu.State {
		if i < 20 {
			ns += uint64(50 * time.Millisecond)
		}
		return state(card(90, func(d *gpu.Device) { d.Throttle = &gpu.Throttle{HWThermal: p(ns)} }))
	}
	all, _ := run(w, t0, 100*time.Millisecond, 15, at)
	only(t, all, finding.CodeGPUThrottled, finding.SeverityWarning, "HW thermal slowdown 50% of the last 1 s")
	for i := 15; i < 40; i++ {
		all, _ = w.Observe(t0.Add(time.Duration(i)*100*time.Millisecond), at(i))
	}
	only(t, all, "", "")
}

func TestPCIeDegraded(t *testing.T) {
	const step = 2 * time.Second
	link := func(util uint32, gen, width, maxGen, maxWidth uint32) func(int) gpu.State {
		return func(int) gpu.State {
			return state(card(util, func(d *gpu.Device) {
				d.PCIe = &gpu.PCIe{Gen: gen, Width: width, MaxGen: maxGen, MaxWidth: maxWidth}
			}))
		}
	}
	replays := func(perStep uint64) func(int) gpu.State {
		return func(i int) gpu.State {
			return state(card(90, func(d *gpu.Device) {
				d.PCIe = &gpu.PCIe{Gen: 4, Width: 16, MaxGen: 4, MaxWidth: 16, Replays: p(uint64(i) * perStep)}
			}))
		}
	}
	tests := []struct {
		name  string
		steps int
		at    func(int) gpu.State
		code  string
		sev   finding.Severity
		says  []string
	}{
		{"idle at Gen1: power saving", 100, link(0, 1, 16, 4, 16), "", "", nil},
		{"Gen3 of Gen4 under load for 30 s", 16, link(90, 3, 16, 4, 16), finding.CodePCIeDegraded, finding.SeverityWarning,
			[]string{"Gen3 x16 under load, below the Gen4 x16", "for 30 s", "reseat"}},
		{"Gen3 of Gen4 under load for 28 s", 15, link(90, 3, 16, 4, 16), "", "", nil},
		{"x8 of x16 under load", 16, link(90, 4, 8, 4, 16), finding.CodePCIeDegraded, finding.SeverityWarning, []string{"Gen4 x8"}},
		{"a x8 slot, running at its best", 16, link(90, 4, 8, 4, 8), finding.CodePCIeDegraded, finding.SeverityInfo,
			[]string{"its slot allows at most Gen4 x8", "Most training does not notice"}},
		{"a Gen3 slot for a Gen4 card", 1, func(int) gpu.State {
			return state(card(90, func(d *gpu.Device) { d.PCIe = &gpu.PCIe{Gen: 3, Width: 16, MaxGen: 3, MaxWidth: 16, CardMaxGen: 4} }))
		}, finding.CodePCIeDegraded, finding.SeverityInfo, []string{"the card can do Gen4"}},
		// Gen4 x16: DCGM allows ceil(0.96*16) = 16 a minute.
		{"replays 30 a minute", 31, replays(1), finding.CodePCIeDegraded, finding.SeverityWarning,
			[]string{"retried 30 PCIe transfers a minute", "above 16 for Gen4 x16"}},
		{"replays 30 a minute at an idle Gen1 (judged at its best)", 31, func(i int) gpu.State {
			s := replays(1)(i)
			s.Devices[0].PCIe.Gen, s.Devices[0].UtilizationGPU = 1, p(uint32(0))
			return s
		}, finding.CodePCIeDegraded, finding.SeverityWarning, []string{"retried 30 PCIe transfers a minute", "above 16 for Gen4 x16"}},
		{"replays 16 a minute", 31, func(i int) gpu.State {
			s := replays(1)(i)
			*s.Devices[0].PCIe.Replays = uint64(i) * 16 / 30
			return s
		}, "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all, _ := run(NewGPUWatch(GPUWatchOptions{}), t0, step, tt.steps, tt.at)
			only(t, all, tt.code, tt.sev, tt.says...)
		})
	}
}

// TestPCIeDegradedNeedsLoadThroughout: a poll below load starts the
// window again.
func TestPCIeDegradedNeedsLoadThroughout(t *testing.T) {
	w := NewGPUWatch(GPUWatchOptions{PCIeWindow: time.Second})
	at := func(i int) gpu.State {
		util := uint32(90)
		if i == 8 {
			util = 0
		}
		return state(card(util, func(d *gpu.Device) { d.PCIe = &gpu.PCIe{Gen: 1, Width: 16, MaxGen: 4, MaxWidth: 16} }))
	}
	all, _ := run(w, t0, 100*time.Millisecond, 18, at)
	only(t, all, "", "")
	all, _ = w.Observe(t0.Add(1900*time.Millisecond), at(19))
	only(t, all, finding.CodePCIeDegraded, finding.SeverityWarning, "Gen1 x16", "for 1 s")
}

func TestGPUMemoryErrors(t *testing.T) {
	tests := []struct {
		name string
		ecc  *gpu.ECC
		says []string
	}{
		{"not supported (GeForce)", nil, nil},
		{"all clear", &gpu.ECC{VolatileDBE: p(uint64(0)), RetiredPending: p(false), RemapPending: p(false), RemapFailure: p(false)}, nil},
		{"double-bit errors", &gpu.ECC{VolatileDBE: p(uint64(2))}, []string{"2 uncorrectable (double-bit) ECC error(s)", "reset or reboot needed", "nvidia-smi -r -i 0"}},
		{"pages pending", &gpu.ECC{RetiredPending: p(true)}, []string{"memory pages waiting to be retired", "reset or reboot needed"}},
		{"remap pending", &gpu.ECC{RemapPending: p(true)}, []string{"a row remap waiting"}},
		{"remap failed", &gpu.ECC{RemapFailure: p(true)}, []string{"a row remap that failed", "needs service"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := state(card(0, func(d *gpu.Device) { d.ECC = tt.ecc }))
			code := ""
			if tt.says != nil {
				code = finding.CodeGPUMemoryErrors
			}
			only(t, CheckGPUHealth(g), code, finding.SeverityError, tt.says...)
			all, _ := NewGPUWatch(GPUWatchOptions{}).Observe(t0, g)
			only(t, all, code, finding.SeverityError, tt.says...)
		})
	}
}

func TestGPULost(t *testing.T) {
	lost := gpu.Device{Index: 0, Name: "NVIDIA RTX A6000", UUID: "GPU-a6000", Lost: true, Error: "the GPU has fallen off the bus"}
	only(t, CheckGPUHealth(state(lost)), finding.CodeGPULost, finding.SeverityError, "has stopped answering the driver (the GPU has fallen off the bus)", "reboot", "power cables")

	w := NewGPUWatch(GPUWatchOptions{})
	other := card(90, func(d *gpu.Device) { d.Index, d.UUID, d.Name = 1, "GPU-other", "NVIDIA GeForce RTX 4090" })
	all, _ := w.Observe(t0, state(card(90), other))
	only(t, all, "", "")
	// GPU 0 is gone: the one left is listed as GPU 0 now.
	left := other
	left.Index = 0
	all, _ = w.Observe(t0.Add(time.Second), state(left))
	only(t, all, finding.CodeGPULost, finding.SeverityError, "GPU 0 (NVIDIA RTX A6000) (GPU-a6000) is no longer listed by the driver: 1 GPU(s) are now, 2 were")
	// No driver at all is NO_GPU_DRIVER's, not a lost GPU.
	all, _ = w.Observe(t0.Add(2*time.Second), gpu.State{Devices: []gpu.Device{}})
	only(t, all, "", "")
	all, _ = w.Observe(t0.Add(3*time.Second), state(card(90), other))
	only(t, all, "", "")
}

func TestGPUXid(t *testing.T) {
	w := NewGPUWatch(GPUWatchOptions{XidHold: time.Minute})
	xids := func(xs ...uint64) gpu.State {
		return state(card(90, func(d *gpu.Device) {
			for _, x := range xs {
				d.Xids = append(d.Xids, gpu.Xid{Xid: x})
			}
		}))
	}
	all, fresh := w.Observe(t0, xids(45, 13))
	only(t, all, "", "")
	only(t, fresh, "", "")
	all, fresh = w.Observe(t0.Add(time.Second), xids(79, 79, 43))
	only(t, fresh, finding.CodeGPUXid, finding.SeverityError, "GPU 0 (NVIDIA RTX A6000) reported Xid 79 (the GPU fell off the bus).", "Save your work")
	only(t, all, finding.CodeGPUXid, finding.SeverityError)
	all, fresh = w.Observe(t0.Add(30*time.Second), xids())
	only(t, fresh, "", "")
	only(t, all, finding.CodeGPUXid, finding.SeverityError, "Xid 79")
	_, fresh = w.Observe(t0.Add(40*time.Second), xids(48))
	only(t, fresh, finding.CodeGPUXid, finding.SeverityError, "Xid 48 (an uncorrectable")
	all, _ = w.Observe(t0.Add(101*time.Second), xids())
	only(t, all, "", "")
}
