package report

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/human"
)

// A job's report (`gpucanary report --job PID`): what happened to one
// training run, from the record the engine kept of it when it ended
// (monitor.JobRecord), or what is known of it while it runs. Like the
// rest of the bundle it records no environment variables, and its command
// line is the one the process scan redacted.

// JobFiles are the names a job's bundle holds.
var JobFiles = []string{"README.md", "job.json"}

// EventsAround is how far from a job's end the events shown beside it
// are taken: what else happened on the machine as it ended.
const EventsAround = 5 * time.Minute

// JobBundle is what a job's report holds.
type JobBundle struct {
	Time    time.Time
	Version string
	Host    Host
	PID     int
	// Record is the engine's record of the job's end; nil when the job
	// still runs (then Running says what is known of it).
	Record  *monitor.JobRecord
	Running *monitor.Process
	// Events are the events of the history within EventsAround of the
	// end, oldest first; HistoryError says why the history could not be
	// read, if it could not.
	Events       []monitor.Event
	HistoryError string
}

// jobJSON is job.json.
type jobJSON struct {
	PID          int                `json:"pid"`
	Record       *monitor.JobRecord `json:"record,omitempty"`
	Running      *monitor.Process   `json:"running,omitempty"`
	Events       []monitor.Event    `json:"events_around_end"`
	HistoryError string             `json:"history_error,omitempty"`
}

// EventsNear are the events of evs (any order) within EventsAround of
// at, oldest first.
func EventsNear(evs []monitor.Event, at time.Time) []monitor.Event {
	var out []monitor.Event
	for _, e := range evs {
		if d := e.Time.Sub(at); d >= -EventsAround && d <= EventsAround {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b monitor.Event) int { return a.Time.Compare(b.Time) })
	return out
}

// WriteJob creates dir (or uses it when empty) and writes the job's
// bundle into it; like Write, it refuses a folder that holds files.
func WriteJob(dir string, b JobBundle) error {
	if err := prepare(dir); err != nil {
		return err
	}
	evs := b.Events
	if evs == nil {
		evs = []monitor.Event{}
	}
	files := map[string][]byte{
		"README.md": []byte(JobMarkdown(b)),
		"job.json":  mustJSON(jobJSON{PID: b.PID, Record: b.Record, Running: b.Running, Events: evs, HistoryError: b.HistoryError}),
	}
	for _, name := range JobFiles {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			return fmt.Errorf("writing report %s: %w", path, err)
		}
	}
	return nil
}

// JobMarkdown is the job's report as a person reads it.
func JobMarkdown(b JobBundle) string {
	var s strings.Builder
	switch {
	case b.Record != nil && b.Record.Ended.Job != nil:
		jobEnded(&s, b)
	case b.Running != nil:
		jobRunning(&s, b)
	default:
		writef(&s, "# Job %d\n\nNothing is known of it.\n", b.PID)
	}
	return s.String()
}

func jobEnded(s *strings.Builder, b JobBundle) {
	r, j := b.Record, b.Record.Ended.Job
	name := human.JobName(j.Command)
	writef(s, "# What happened to %s (PID %d)\n\n", orUnknown(name), j.PID)
	writef(s, "Written %s on %s (%s) by GPU Canary %s, from the record the engine kept when the job ended.\n\n",
		b.Time.Format(time.RFC3339), orUnknown(b.Host.Hostname), b.Host.describe(), b.Version)
	if r.Simulated {
		writef(s, "**The GPU in this record is simulated**: it is not this machine's hardware.\n\n")
	}
	writef(s, "## How it ended\n\n**%s.** %s\n\n", string(j.How), r.Ended.Message)
	writef(s, "- Command: %s\n", code(strings.Join(j.Command, " ")))
	if len(j.PIDs) > 1 {
		writef(s, "- Processes: %s\n", fmt.Sprint(j.PIDs))
	}
	if j.Env != "" {
		writef(s, "- Environment: %s (verdict then: %s)\n", j.Env, orUnknown(string(r.EnvVerdict)))
	} else {
		writef(s, "- Environment: none GPU Canary watches\n")
	}
	for _, f := range r.EnvFindings {
		writef(s, "  - **%s** (%s): %s\n", f.Code, f.Severity, f.Message)
	}
	ended := r.Ended.Time
	if !j.Started.IsZero() {
		writef(s, "- Started: %s\n", j.Started.Format(time.RFC3339))
	}
	writef(s, "- Ended: %s\n- Ran: %s\n", ended.Format(time.RFC3339), human.Duration(time.Duration(j.RunSeconds*float64(time.Second))))
	if j.PeakGPUMemoryBytes != nil {
		writef(s, "- Peak GPU memory: %s\n", human.Bytes(*j.PeakGPUMemoryBytes))
	}
	if j.MeanGPUPercent != nil {
		writef(s, "- Mean GPU utilisation: %s\n", fmt.Sprintf("%.0f %%", *j.MeanGPUPercent))
	}
	writef(s, "- NVIDIA driver: %s (CUDA %s)\n", orUnknown(r.Driver), orUnknown(r.CUDADriver))
	for _, i := range slices.Sorted(maps.Keys(r.GPUNames)) {
		writef(s, "- GPU %d: %s\n", i, r.GPUNames[i])
	}
	sampleTable(s, r)
	writef(s, "\n## Events within 5 minutes of its end\n\n")
	if b.HistoryError != "" {
		writef(s, "The history could not all be read: %s\n\n", b.HistoryError)
	}
	if len(b.Events) == 0 {
		writef(s, "None.\n")
		return
	}
	writef(s, "| time | what | message |\n| --- | --- | --- |\n")
	for _, e := range b.Events {
		what := string(e.Kind)
		if e.Finding != nil && string(e.Finding.Code) != what {
			what += " " + string(e.Finding.Code)
		}
		writef(s, "| %s | %s | %s |\n", e.Time.Format("15:04:05"), what, oneLine(e.Message))
	}
}

func jobRunning(s *strings.Builder, b JobBundle) {
	p := b.Running
	writef(s, "# Job %d, still running\n\n", p.PID)
	writef(s, "Written %s on %s (%s) by GPU Canary %s.\n\n", b.Time.Format(time.RFC3339), orUnknown(b.Host.Hostname), b.Host.describe(), b.Version)
	writef(s, "Its samples are kept while it runs by GPU Canary's tray or `gpucanary watch`, and written when it ends: "+
		"with one of them running, run `gpucanary report --job %d` again once the job has ended. What is known now:\n\n", p.PID)
	writef(s, "- Command: %s\n", code(p.Command()))
	if p.EnvPath != "" {
		writef(s, "- Environment: %s\n", p.EnvPath)
	}
	writef(s, "- Verdict: %s\n", string(p.Verdict))
	if !p.StartTime.IsZero() {
		writef(s, "- Started: %s\n", p.StartTime.Format(time.RFC3339))
	}
	if p.GPUMemoryBytes != nil {
		writef(s, "- GPU memory now: %s\n", human.Bytes(*p.GPUMemoryBytes))
	}
	for _, f := range p.Findings {
		writef(s, "- **%s** (%s): %s\n", f.Code, f.Severity, f.Message)
	}
}

// sampleRow is how the samples are told: one row a minute per GPU (the
// mean and most of what moves, every throttle reason seen that minute),
// so 30 minutes are 30 rows, not 900.
const sampleRow = time.Minute

func sampleTable(s *strings.Builder, r *monitor.JobRecord) {
	writef(s, "\n## Its last %s minutes on the GPU\n\n", fmt.Sprint(int(monitor.JobSampleWindow.Minutes())))
	if len(r.Samples) == 0 {
		writef(s, "No samples were kept (the GPU was not seen at a poll while it ran).\n")
		return
	}
	first, last := r.Samples[0].Time, r.Samples[len(r.Samples)-1].Time
	writef(s, "%d samples from %s to %s, one every %s, shown a minute to a row: utilisation (mean and most), memory used (most), power (mean), temperature (most), and the clocks-event (throttle) reasons seen.\n\n",
		len(r.Samples), first.Format("15:04:05"), last.Format("15:04:05"), fmt.Sprintf("%gs", r.SampleSeconds))
	writef(s, "| from | GPU | util %% mean / max | memory max | power W | temp °C max | throttle reasons |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	type key struct {
		at  time.Time
		gpu int
	}
	type agg struct {
		utilSum, utilMax float64
		utilN            int
		mem, memTotal    uint64
		powSum           float64
		powN             int
		temp             uint32
		tempOK           bool
		reasons          []string
	}
	rows := map[key]*agg{}
	for _, x := range r.Samples {
		k := key{first.Add(x.Time.Sub(first).Truncate(sampleRow)), x.GPU}
		a := rows[k]
		if a == nil {
			a = &agg{}
			rows[k] = a
		}
		if x.UtilPercent != nil {
			u := float64(*x.UtilPercent)
			a.utilSum += u
			a.utilMax = max(a.utilMax, u)
			a.utilN++
		}
		a.mem, a.memTotal = max(a.mem, x.MemoryUsedBytes), x.MemoryTotalBytes
		if x.PowerWatts != nil {
			a.powSum += *x.PowerWatts
			a.powN++
		}
		if x.TemperatureC != nil {
			a.temp, a.tempOK = max(a.temp, *x.TemperatureC), true
		}
		for _, rs := range x.Reasons {
			if !slices.Contains(a.reasons, rs) {
				a.reasons = append(a.reasons, rs)
			}
		}
	}
	keys := slices.SortedFunc(maps.Keys(rows), func(a, b key) int {
		return cmp.Or(a.at.Compare(b.at), a.gpu-b.gpu)
	})
	for _, k := range keys {
		a := rows[k]
		util, pow, temp := "n/a", "n/a", "n/a"
		if a.utilN > 0 {
			util = fmt.Sprintf("%.0f / %.0f", a.utilSum/float64(a.utilN), a.utilMax)
		}
		if a.powN > 0 {
			pow = fmt.Sprintf("%.0f", a.powSum/float64(a.powN))
		}
		if a.tempOK {
			temp = fmt.Sprint(a.temp)
		}
		mem := human.Bytes(a.mem)
		if a.memTotal > 0 {
			mem += fmt.Sprintf(" (%.0f %%)", 100*float64(a.mem)/float64(a.memTotal))
		}
		reasons := "none"
		if len(a.reasons) > 0 {
			reasons = strings.Join(a.reasons, ", ")
		}
		writef(s, "| %s | %d | %s | %s | %s | %s | %s |\n", k.at.Format("15:04:05"), k.gpu, util, mem, pow, temp, reasons)
	}
}

// oneLine puts a message in one table cell.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
