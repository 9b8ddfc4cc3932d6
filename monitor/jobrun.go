package monitor

import (
	"time"

	"github.com/gpucanary/gpucanary/monitor/finding"
)

// What the engine knows of GPU jobs while they run, and keeps of one when
// it ends: the tray's tooltip lists the running ones, the GPUs window
// marks their lives on its charts, and `gpucanary report --job PID`
// writes what happened to one from its record (JobRecord).

// JobRun is a GPU job running now, as the last process poll saw it.
type JobRun struct {
	PID     int       `json:"pid"`
	Command []string  `json:"command,omitempty"` // redacted of secrets
	Env     string    `json:"env,omitempty"`
	Started time.Time `json:"started,omitzero"`
	// GPUs are the indexes of the GPUs its processes held memory on at
	// the last poll; GPUPercent is the busiest one's utilisation then
	// (nil when the driver did not say).
	GPUs       []int    `json:"gpus,omitempty"`
	GPUPercent *float64 `json:"gpu_percent,omitempty"`
	// Asked: someone asked to be told when it ends (JOB_ENDED whatever
	// its run time); Quiet: its notifications are silenced until it ends.
	Asked bool `json:"asked,omitempty"`
	Quiet bool `json:"quiet,omitempty"`
}

// The kinds of a JobMark.
const (
	MarkStarted = "started"
	MarkEnded   = "ended"
	// MarkStalled is for a job that stopped computing while holding its
	// GPU (JOB_STALLED), or spins without working (JOB_SPINNING, Detail
	// "spinning"), at the poll that began; the GPUs window draws it like
	// the others.
	MarkStalled = "stalled"
)

// JobMark is one moment of a job's life on one GPU: it started, ended,
// or stalled there.
type JobMark struct {
	Time time.Time `json:"time"`
	Kind string    `json:"kind"`
	PID  int       `json:"pid"`
	GPU  int       `json:"gpu"`
	// Label names the job ("train.py"); Detail says more where there is
	// more (how it ended).
	Label  string `json:"label,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// JobMarksKept bounds State.JobMarks: the newest marks, enough for the
// GPUs window's longest span on a machine that runs a few jobs an hour.
const JobMarksKept = 64

// JobSample is one poll's reading of one GPU a job used: what a slow or
// failed run is explained by. Nil fields are what the driver did not say.
type JobSample struct {
	Time            time.Time `json:"t"`
	GPU             int       `json:"gpu"`
	UtilPercent     *uint32   `json:"util,omitempty"`
	MemoryUsedBytes uint64    `json:"mem"`
	// MemoryTotalBytes is the GPU's memory, for the share used.
	MemoryTotalBytes uint64   `json:"mem_total,omitempty"`
	PowerWatts       *float64 `json:"power,omitempty"`
	TemperatureC     *uint32  `json:"temp,omitempty"`
	// Reasons are the clocks-event (throttle) reasons then
	// (gpu.ReasonSWPowerCap, ...), gpu_idle left out.
	Reasons []string `json:"reasons,omitempty"`
}

// JobRecord is what is kept of a job that ended, for a report written
// later by another process (`gpucanary report --job PID`): the JOB_ENDED
// event, the samples of its last minutes (JobSampleWindow), the driver,
// and its environment's verdict then.
type JobRecord struct {
	Ended         Event       `json:"ended"`
	Samples       []JobSample `json:"samples"`
	SampleSeconds float64     `json:"sample_seconds"` // the poll interval the samples were taken at
	Driver        string      `json:"driver,omitempty"`
	CUDADriver    string      `json:"cuda_driver,omitempty"`
	// GPUNames are the names of the GPUs it used, by index.
	GPUNames  map[int]string `json:"gpu_names,omitempty"`
	Simulated bool           `json:"simulated,omitempty"`
	// EnvVerdict and EnvFindings are its environment's verdict and
	// findings when it ended; empty when it had none GPU Canary watched.
	EnvVerdict  Verdict           `json:"env_verdict,omitempty"`
	EnvFindings []finding.Finding `json:"env_findings,omitempty"`
}

// JobSampleWindow is how much of a job's last samples the engine keeps
// (and a record holds): enough to see how the end came.
const JobSampleWindow = 30 * time.Minute
