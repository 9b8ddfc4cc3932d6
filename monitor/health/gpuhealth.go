package health

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// This file holds the GPU health rules for a training run (issue 44):
// GPU_THROTTLED, GPU_LOST, GPU_XID, PCIE_DEGRADED and GPU_MEMORY_ERRORS;
// spill.go adds VRAM_SPILL and DRIVER_RESET.
// Those that need time (a counter's growth over a window, a link low for
// a while, a device that was listed before) are judged by a GPUWatch the
// engine feeds every snapshot; those a single snapshot shows are
// CheckGPUHealth's, which `check` uses too.

// GPUWatchOptions are the windows of the rules that need time. Zero
// values are the defaults; tests give short ones.
type GPUWatchOptions struct {
	// ThrottleWindow is the window throttling and PCIe replays are
	// measured over (default 60s, DCGM's).
	ThrottleWindow time.Duration
	// PCIeWindow is how long a link must stay below its best under load
	// to be PCIE_DEGRADED (default 30s).
	PCIeWindow time.Duration
	// XidHold is how long GPU_XID stays raised after the last Xid
	// (default 10m): an Xid is an event, and the finding is its echo in
	// the state. DRIVER_RESET is held as long after the last reset.
	XidHold time.Duration
	// SpillWindow is how long a process must spill into system memory,
	// growing, to be VRAM_SPILL (default 60s).
	SpillWindow time.Duration
}

// Thresholds of the rules (docs/codes.md; TRAINING-FACTS.md §2, §3).
const (
	// LoadPercent is the utilisation at and above which a GPU is under
	// load: below it, a low link and clock events are power saving.
	LoadPercent = 50
	// ThrottleShare is the share of the window a reason must have held
	// the clocks back to be GPU_THROTTLED.
	ThrottleShare = 0.10
	// MarginLimitC is the temperature margin at or under which a GPU
	// under load is about to slow down.
	MarginLimitC = 3
)

func (o GPUWatchOptions) withDefaults() GPUWatchOptions {
	if o.ThrottleWindow <= 0 {
		o.ThrottleWindow = 60 * time.Second
	}
	if o.PCIeWindow <= 0 {
		o.PCIeWindow = 30 * time.Second
	}
	if o.XidHold <= 0 {
		o.XidHold = 10 * time.Minute
	}
	if o.SpillWindow <= 0 {
		o.SpillWindow = 60 * time.Second
	}
	return o
}

// GPUWatch judges the GPU health rules over successive snapshots. It is
// owned by one goroutine (the engine's).
type GPUWatch struct {
	o    GPUWatchOptions
	devs map[string]*deviceWatch
	// listed is every device seen, by UUID, with how it was last seen:
	// one missing later is GPU_LOST.
	listed map[string]gpu.Device
	// xids are the GPU_XID findings held, by key, until their time.
	xids map[string]heldXid
	// spill is each process's run of polls spilling (spill.go).
	spill map[spillKey]*spillWatch
	// reset is DRIVER_RESET while held; nil when it is not.
	reset *heldReset
}

type heldXid struct {
	f     finding.Finding
	until time.Time
}

// deviceWatch is one device's samples within the window.
type deviceWatch struct {
	samples []sample
	// linkLowSince is when the link was first seen below its best under
	// load, in the run of polls it has stayed so; zero when it is not.
	linkLowSince time.Time
}

// sample is what one snapshot said of a device that the rules over time
// read.
type sample struct {
	at       time.Time
	util     *uint32
	reasons  []string
	throttle gpu.Throttle
	replays  *uint64
}

// NewGPUWatch returns a watch with o's windows.
func NewGPUWatch(o GPUWatchOptions) *GPUWatch {
	return &GPUWatch{o: o.withDefaults(), devs: map[string]*deviceWatch{}, listed: map[string]gpu.Device{}, xids: map[string]heldXid{},
		spill: map[spillKey]*spillWatch{}}
}

// Observe takes the snapshot g read at now and returns the GPU health
// findings that hold now, and among them those that are news even when
// already raised: a new Xid is told each time.
func (w *GPUWatch) Observe(now time.Time, g gpu.State) (all, fresh []finding.Finding) {
	present := map[string]bool{}
	for _, d := range g.Devices {
		key := deviceKey(d)
		present[key] = true
		if d.UUID != "" {
			w.listed[d.UUID] = d
		}
		all = append(all, stateFindings(d)...)
		if d.Lost {
			delete(w.devs, key)
			continue
		}
		dw := w.devs[key]
		if dw == nil {
			dw = &deviceWatch{}
			w.devs[key] = dw
		}
		dw.add(now, d, w.o.ThrottleWindow)
		if f, ok := dw.throttled(now, d, w.o.ThrottleWindow); ok {
			all = append(all, f)
		}
		if f, ok := dw.pcie(now, d, w.o); ok {
			all = append(all, f)
		}
		if f, ok := xidFinding(d); ok {
			w.xids[f.Key()] = heldXid{f: f, until: now.Add(w.o.XidHold)}
			fresh = append(fresh, f)
		}
	}
	for key := range w.devs {
		if !present[key] {
			delete(w.devs, key)
		}
	}
	if g.HasDriver() {
		all = append(all, w.missing(g)...)
	}
	all = append(all, w.spills(now, g)...)
	if f, held, isNew := w.driverReset(now, g); held {
		all = append(all, f)
		if isNew {
			fresh = append(fresh, f)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(w.xids)) {
		h := w.xids[k]
		if now.After(h.until) {
			delete(w.xids, k)
			continue
		}
		all = append(all, h.f)
	}
	return all, fresh
}

// deviceKey names a device across snapshots: its UUID, or its index.
func deviceKey(d gpu.Device) string {
	if d.UUID != "" {
		return d.UUID
	}
	return "index " + strconv.Itoa(d.Index)
}

// gpuEnv is the subject of a finding about device index (as
// GPU_MEMORY_ORPHANED's).
func gpuEnv(index int) string { return "gpu:" + strconv.Itoa(index) }

// gpuLabel is "GPU 0 (NVIDIA RTX A6000)".
func gpuLabel(d gpu.Device) string {
	s := fmt.Sprintf("GPU %d", d.Index)
	if d.Name != "" && d.Name != s {
		s += " (" + d.Name + ")"
	}
	return s
}

// CheckGPUHealth is what one snapshot says of the GPUs' health: a GPU off
// the bus (GPU_LOST), memory errors that need a reset (GPU_MEMORY_ERRORS),
// and a slot that holds a card's link back (PCIE_DEGRADED, info). The
// rules that need time are GPUWatch's.
func CheckGPUHealth(g gpu.State) []finding.Finding {
	var out []finding.Finding
	for _, d := range g.Devices {
		out = append(out, stateFindings(d)...)
		if f, ok := slotLimited(d); ok {
			out = append(out, f)
		}
	}
	return out
}

// stateFindings are GPU_LOST and GPU_MEMORY_ERRORS for one device.
func stateFindings(d gpu.Device) []finding.Finding {
	if d.Lost {
		return []finding.Finding{{Code: finding.CodeGPULost, Severity: finding.SeverityError, Env: gpuEnv(d.Index),
			Message: fmt.Sprintf("%s has stopped answering the driver (%s). Jobs on it have failed or will: save what you can, then reboot (a GPU reset, sudo nvidia-smi -r -i %d, may do). If it happens again, check its power cables and power supply, its seating in the slot, and its cooling.",
				gpuLabel(d), d.Error, d.Index)}}
	}
	if f, ok := memoryErrors(d); ok {
		return []finding.Finding{f}
	}
	return nil
}

// missing is GPU_LOST for each GPU listed before that the driver no
// longer lists.
func (w *GPUWatch) missing(g gpu.State) []finding.Finding {
	now := map[string]bool{}
	for _, d := range g.Devices {
		now[d.UUID] = true
	}
	var out []finding.Finding
	for _, uuid := range slices.Sorted(maps.Keys(w.listed)) {
		if now[uuid] {
			continue
		}
		d := w.listed[uuid]
		out = append(out, finding.Finding{Code: finding.CodeGPULost, Severity: finding.SeverityError, Env: gpuEnv(d.Index),
			Message: fmt.Sprintf("%s (%s) is no longer listed by the driver: %d GPU(s) are now, %d were. Jobs on it have failed: save what you can, then reboot. If it happens again, check its power cables and power supply, its seating in the slot, and its cooling.",
				gpuLabel(d), uuid, len(g.Devices), len(g.Devices)+countMissing(w.listed, now))})
	}
	return out
}

func countMissing(listed map[string]gpu.Device, now map[string]bool) int {
	n := 0
	for uuid := range listed {
		if !now[uuid] {
			n++
		}
	}
	return n
}

// memoryErrors is GPU_MEMORY_ERRORS: DCGM's memory watch (a volatile
// double-bit error, a page pending retirement, a row remap pending or
// failed). A card that does not say (GeForce: NOT_SUPPORTED) is silent.
func memoryErrors(d gpu.Device) (finding.Finding, bool) {
	e := d.ECC
	if e == nil {
		return finding.Finding{}, false
	}
	var what []string
	if e.VolatileDBE != nil && *e.VolatileDBE > 0 {
		what = append(what, fmt.Sprintf("%d uncorrectable (double-bit) ECC error(s) since the driver loaded", *e.VolatileDBE))
	}
	if e.RetiredPending != nil && *e.RetiredPending {
		what = append(what, "memory pages waiting to be retired")
	}
	if e.RemapPending != nil && *e.RemapPending {
		what = append(what, "a row remap waiting")
	}
	failed := e.RemapFailure != nil && *e.RemapFailure
	if failed {
		what = append(what, "a row remap that failed")
	}
	if len(what) == 0 {
		return finding.Finding{}, false
	}
	msg := fmt.Sprintf("%s reports %s: reset or reboot needed. Save your work and stop the jobs on it, then reset it (sudo nvidia-smi -r -i %d) or reboot; results computed since may be wrong.",
		gpuLabel(d), strings.Join(what, ", "), d.Index)
	if failed {
		msg += " A failed row remap means the card has run out of spare memory rows: it needs service."
	}
	return finding.Finding{Code: finding.CodeGPUMemoryErrors, Severity: finding.SeverityError, Env: gpuEnv(d.Index), Message: msg}, true
}

// add records d's sample at now, keeping the newest sample at or before
// the window's start as its baseline.
func (dw *deviceWatch) add(now time.Time, d gpu.Device, window time.Duration) {
	s := sample{at: now, util: d.UtilizationGPU, reasons: d.ClocksEventReasons, replays: nil}
	if d.Throttle != nil {
		s.throttle = *d.Throttle
	}
	if d.PCIe != nil {
		s.replays = d.PCIe.Replays
	}
	dw.samples = append(dw.samples, s)
	start := now.Add(-window)
	cut := 0
	for i := range dw.samples {
		if !dw.samples[i].at.After(start) {
			cut = i // the newest at or before the start
		}
	}
	dw.samples = dw.samples[cut:]
}

// windowed reports whether the samples cover the whole window: the
// first is at or before its start.
func (dw *deviceWatch) windowed(now time.Time, window time.Duration) bool {
	return len(dw.samples) > 1 && !dw.samples[0].at.After(now.Add(-window))
}

// underLoad reports whether every sample in the window after the
// baseline saw the GPU at least LoadPercent busy.
func (dw *deviceWatch) underLoad() bool {
	for _, s := range dw.samples[1:] {
		if s.util == nil || *s.util < LoadPercent {
			return false
		}
	}
	return true
}

// throttleReason is one reason GPU_THROTTLED judges, the counter that
// measures it, and what to do about it.
type throttleReason struct {
	name    string // gpu.Reason*
	words   string
	counter func(gpu.Throttle) *uint64
	advice  string
}

const coolingAdvice = "check its cooling: fans turning, airflow through the case, dust in the heatsink, the room's temperature"

// throttleReasons are judged in this order. SW power cap and GPU idle
// are not among them: a GeForce under load runs at its power cap, and
// an idle GPU lowers its clocks by design.
var throttleReasons = []throttleReason{
	{gpu.ReasonHWSlowdown, "HW slowdown", func(t gpu.Throttle) *uint64 { return t.HWSlowdown },
		"HW slowdown under load is most often a power supply that cannot keep up or a card too hot: check the PSU and the card's power cables, then its cooling"},
	{gpu.ReasonHWThermalSlowdown, "HW thermal slowdown", func(t gpu.Throttle) *uint64 { return t.HWThermal }, coolingAdvice},
	{gpu.ReasonHWPowerBrake, "HW power brake", func(t gpu.Throttle) *uint64 { return t.HWPowerBrake },
		"the power brake is a signal from the system (often the power supply) to slow down: check the PSU and the card's power cables"},
	{gpu.ReasonSWThermalSlowdown, "SW thermal slowdown", func(t gpu.Throttle) *uint64 { return t.SWThermal }, coolingAdvice},
}

// throttled is GPU_THROTTLED for one device: under load for the whole
// window, a reason held the clocks back for ThrottleShare of it (by its
// counter where the driver keeps one, else by the sampled reasons), or
// the temperature margin is MarginLimitC or less.
func (dw *deviceWatch) throttled(now time.Time, d gpu.Device, window time.Duration) (finding.Finding, bool) {
	var said []string
	advice := ""
	if dw.windowed(now, window) && dw.underLoad() {
		for _, r := range throttleReasons {
			share, ok := dw.share(r)
			if !ok || share < ThrottleShare {
				continue
			}
			said = append(said, fmt.Sprintf("%s %d%% of the last %s", r.words, int(math.Round(share*100)), seconds(window)))
			if advice == "" {
				advice = r.advice
			}
		}
	}
	loaded := d.UtilizationGPU != nil && *d.UtilizationGPU >= LoadPercent
	if m := d.MarginTemperatureC; m != nil && *m <= MarginLimitC && loaded {
		said = append(said, fmt.Sprintf("%d °C from its slowdown temperature", *m))
		if advice == "" {
			advice = coolingAdvice
		}
	}
	if len(said) == 0 {
		return finding.Finding{}, false
	}
	msg := fmt.Sprintf("%s is slowing down under load: %s%s. Training still runs, only slower; %s.", gpuLabel(d), strings.Join(said, ", "), readings(d), advice)
	return finding.Finding{Code: finding.CodeGPUThrottled, Severity: finding.SeverityWarning, Env: gpuEnv(d.Index), Message: msg}, true
}

// share is the part of the window r held the clocks back: its counter's
// growth over the wall time where both ends have it, else the time its
// bit was set in the samples (each sample standing for the time since
// the one before).
func (dw *deviceWatch) share(r throttleReason) (float64, bool) {
	first, last := dw.samples[0], dw.samples[len(dw.samples)-1]
	wall := last.at.Sub(first.at)
	if wall <= 0 {
		return 0, false
	}
	if a, b := r.counter(first.throttle), r.counter(last.throttle); a != nil && b != nil {
		if *b < *a {
			return 0, false // the driver reloaded: the counter started again
		}
		return float64(*b-*a) / float64(wall.Nanoseconds()), true
	}
	var held time.Duration
	for i := 1; i < len(dw.samples); i++ {
		if slices.Contains(dw.samples[i].reasons, r.name) {
			held += dw.samples[i].at.Sub(dw.samples[i-1].at)
		}
	}
	return float64(held) / float64(wall), true
}

// readings is ", at 84 °C, 290 W of 300 W": what the device says now.
func readings(d gpu.Device) string {
	var parts []string
	if d.TemperatureC != nil {
		parts = append(parts, fmt.Sprintf("%d °C", *d.TemperatureC))
	}
	if d.PowerWatts != nil {
		p := fmt.Sprintf("%.0f W", *d.PowerWatts)
		if d.PowerLimitWatts != nil {
			p += fmt.Sprintf(" of %.0f W", *d.PowerLimitWatts)
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return ", at " + strings.Join(parts, ", ")
}

// seconds is a window in a sentence: "60 s", "1.5 s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// replaysPerLanePerMinute is DCGM's PCIe replay rate per lane and minute,
// by generation (BER 1e-12; DCGM's health watch, TRAINING-FACTS.md §3).
var replaysPerLanePerMinute = map[uint32]float64{1: 0.15, 2: 0.3, 3: 0.48, 4: 0.96, 5: 1.92, 6: 3.84}

// ReplayLimit is the most PCIe replays a minute DCGM lets pass on a link
// of this generation and width.
func ReplayLimit(gen, width uint32) float64 {
	rate, ok := replaysPerLanePerMinute[gen]
	if !ok {
		rate = replaysPerLanePerMinute[6]
	}
	return math.Ceil(rate * float64(width))
}

// pcie is PCIE_DEGRADED for one device: the link below its best
// generation or width for the PCIe window with the GPU under load on
// every poll (an idle link drops to Gen1 by design), or replays faster
// than ReplayLimit allows the link at its best over the throttle window;
// else, a slot that holds the card back, as an info line.
func (dw *deviceWatch) pcie(now time.Time, d gpu.Device, o GPUWatchOptions) (finding.Finding, bool) {
	l := d.PCIe
	if l == nil {
		dw.linkLowSince = time.Time{}
		return finding.Finding{}, false
	}
	loaded := d.UtilizationGPU != nil && *d.UtilizationGPU >= LoadPercent
	low := l.Gen < l.MaxGen || l.Width < l.MaxWidth
	switch {
	case !loaded || !low:
		dw.linkLowSince = time.Time{}
	case dw.linkLowSince.IsZero():
		dw.linkLowSince = now
	}
	var said []string
	if !dw.linkLowSince.IsZero() && now.Sub(dw.linkLowSince) >= o.PCIeWindow {
		said = append(said, fmt.Sprintf("its link runs at Gen%d x%d under load, below the Gen%d x%d it can do here, for %s or more",
			l.Gen, l.Width, l.MaxGen, l.MaxWidth, seconds(o.PCIeWindow)))
	}
	if dw.windowed(now, o.ThrottleWindow) {
		first, last := dw.samples[0], dw.samples[len(dw.samples)-1]
		if first.replays != nil && last.replays != nil && *last.replays >= *first.replays {
			perMin := float64(*last.replays-*first.replays) / last.at.Sub(first.at).Minutes()
			// Judged at the link's best, the most DCGM allows: a link
			// that idles at Gen1 between bursts is not held to Gen1's rate.
			if limit := ReplayLimit(l.MaxGen, l.MaxWidth); perMin > limit {
				said = append(said, fmt.Sprintf("it retried %.0f PCIe transfers a minute over the last %s (DCGM warns above %.0f for Gen%d x%d)",
					perMin, seconds(o.ThrottleWindow), limit, l.MaxGen, l.MaxWidth))
			}
		}
	}
	if len(said) == 0 {
		return slotLimited(d)
	}
	return finding.Finding{Code: finding.CodePCIeDegraded, Severity: finding.SeverityWarning, Env: gpuEnv(d.Index),
		Message: fmt.Sprintf("%s: %s. Data reaches the GPU slower than it should: power off, reseat the card, check its riser or cable and the slot, and the BIOS's PCIe setting.",
			gpuLabel(d), strings.Join(said, "; "))}, true
}

// slotLimited is PCIE_DEGRADED as an info line: the slot allows less than
// x16, or a lower generation than the card's own.
func slotLimited(d gpu.Device) (finding.Finding, bool) {
	l := d.PCIe
	if l == nil || d.Lost || (l.MaxWidth >= 16 && (l.CardMaxGen == 0 || l.MaxGen >= l.CardMaxGen)) {
		return finding.Finding{}, false
	}
	best := fmt.Sprintf("Gen%d x%d", l.MaxGen, l.MaxWidth)
	msg := fmt.Sprintf("%s: its slot allows at most %s", gpuLabel(d), best)
	if l.CardMaxGen > l.MaxGen {
		msg += fmt.Sprintf(" (the card can do Gen%d)", l.CardMaxGen)
	}
	msg += ". Most training does not notice; a x16 slot of the card's generation gives it full bandwidth."
	return finding.Finding{Code: finding.CodePCIeDegraded, Severity: finding.SeverityInfo, Env: gpuEnv(d.Index), Message: msg}, true
}

// applicationXids are Xids an application causes (an illegal address, a
// kernel killed, a job stopped), after which the GPU is healthy: NVIDIA's
// device plugin skips them the same way (k8s-device-plugin,
// internal/rm/health.go).
var applicationXids = map[uint64]bool{13: true, 31: true, 43: true, 45: true, 68: true}

// ApplicationXid reports whether an Xid is an application's own: no
// GPU_XID, though it may still be why a job died.
func ApplicationXid(xid uint64) bool { return applicationXids[xid] }

// xidMeanings say what the common hardware Xids mean, in a few words
// (NVIDIA's Xid catalog, docs.nvidia.com/deploy/xid-errors).
var xidMeanings = map[uint64]string{
	48:  "an uncorrectable (double-bit) ECC memory error",
	63:  "a memory page retired or a row remapped after ECC errors",
	64:  "a failed page retirement or row remap",
	74:  "an NVLink error",
	79:  "the GPU fell off the bus",
	92:  "a high rate of corrected ECC errors",
	94:  "a contained ECC error (the application using that memory was stopped)",
	95:  "an uncontained ECC error",
	119: "the GPU's firmware (GSP) stopped answering",
	120: "an error in the GPU's firmware (GSP)",
}

// xidFinding is GPU_XID for the Xids the device raised since the last
// snapshot, leaving out the applications' own.
func xidFinding(d gpu.Device) (finding.Finding, bool) {
	var said []string
	for _, x := range d.Xids {
		if ApplicationXid(x.Xid) {
			continue
		}
		s := fmt.Sprintf("Xid %d", x.Xid)
		if m, ok := xidMeanings[x.Xid]; ok {
			s += " (" + m + ")"
		}
		if !slices.Contains(said, s) {
			said = append(said, s)
		}
	}
	if len(said) == 0 {
		return finding.Finding{}, false
	}
	return finding.Finding{Code: finding.CodeGPUXid, Severity: finding.SeverityError, Env: gpuEnv(d.Index),
		Message: fmt.Sprintf("%s reported %s. Save your work: jobs on it may have failed or compute wrong results. If they fail or it happens again, reboot; if it persists, check power, cooling and seating, and look the Xid up in NVIDIA's Xid catalog.",
			gpuLabel(d), strings.Join(said, ", "))}, true
}
