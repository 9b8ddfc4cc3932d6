// Package report writes the evidence bundle: a folder a person can attach
// to a bug report or keep beside a training run, saying what the driver,
// the GPUs, every environment and every GPU process were at one moment
// (incident 4: "evidence of the environment must be written down").
//
// It writes only inside its folder, never into a folder that already holds
// files, and nothing in it is a secret: command lines are redacted by the
// process scan and no environment variables are recorded.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Bundle is everything a report holds.
type Bundle struct {
	Time      time.Time
	Version   string // GPU Canary's
	Host      Host
	Check     monitor.CheckResult
	Processes []monitor.Process
	// Summary is the one-line status of Check and Processes, the tray's
	// (output/words' Summary), which the caller words: this package only
	// writes.
	Summary string
	// Knowledge is how current the facts the findings rest on are.
	Knowledge Knowledge
	// History is the newest events of the engine's history: what
	// happened before the moment the rest of the bundle describes.
	History History
}

// History is what the bundle holds of the engine's event history: the
// newest events as the caller read them (store.History, with a limit),
// newest first, the damaged lines skipped, and why the history could not
// be read, if it could not. It is written as JSON only: what was read
// back from a file is never put into the Markdown as it is.
type History struct {
	Events  []monitor.Event `json:"events"`
	Damaged int             `json:"damaged_lines"`
	Error   string          `json:"error,omitempty"`
}

// Knowledge is the date of GPU Canary's built-in facts and the overlay
// files read over them (kb.AsOf, kb.Overlays).
type Knowledge struct {
	AsOf     string
	Overlays []kb.OverlayFile
}

// line says it in one sentence for README.md.
func (k Knowledge) line() string {
	if k.AsOf == "" {
		return ""
	}
	var read []string
	for _, o := range k.Overlays {
		if o.Error != "" {
			read = append(read, fmt.Sprintf("%s (ignored: %s)", o.Path, o.Error))
		} else {
			read = append(read, fmt.Sprintf("%s (%d rows)", o.Path, o.Rows))
		}
	}
	overlays := "no knowledge overlays were read"
	if len(read) > 0 {
		overlays = "knowledge overlays read over them: " + strings.Join(read, "; ")
	}
	return fmt.Sprintf("GPU Canary's facts about torch releases and drivers are as of %s; %s.\n\n", k.AsOf, overlays)
}

// Host describes the machine, as read by ReadHost (host_linux.go,
// host_windows.go): what cannot be read stays empty.
type Host struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
	// System is the operating system's own name: os-release's PRETTY_NAME
	// ("Debian GNU/Linux 12 (bookworm)"), or the Windows edition and
	// release ("Windows 11 Pro 23H2").
	System string `json:"system,omitempty"`
	// Kernel is the Linux kernel's release ("6.1.0-18-amd64").
	Kernel string `json:"kernel,omitempty"`
	// Version and Build are Windows' version and build with its update
	// revision ("10.0", "22631.3880"), from RtlGetVersion and the registry.
	Version  string `json:"version,omitempty"`
	Build    string `json:"build,omitempty"`
	Hostname string `json:"hostname,omitempty"`
}

// ReadHost reads the machine's description; what cannot be read stays empty.
func ReadHost() Host {
	h := readHost()
	h.OS, h.Arch = runtime.GOOS, runtime.GOARCH
	h.Hostname, _ = os.Hostname()
	return h
}

// describe is the host in one line: "linux amd64, Debian GNU/Linux 12
// (bookworm), kernel 6.1.0" or "windows amd64, Windows 11 Pro 23H2,
// version 10.0 build 22631.3880".
func (h Host) describe() string {
	s := h.OS + " " + h.Arch
	if h.System != "" {
		s += ", " + h.System
	}
	if h.Kernel != "" {
		s += ", kernel " + h.Kernel
	}
	if h.Version != "" {
		s += ", version " + h.Version
	}
	if h.Build != "" {
		s += " build " + h.Build
	}
	return s
}

// Files are the names a bundle holds.
var Files = []string{"README.md", "env_info.md", "gpu.json", "processes.json", "check.json", "history.json"}

// Write creates dir (or uses it when empty) and writes the bundle into it.
// It refuses a folder that already holds files, so nothing is overwritten.
func Write(dir string, b Bundle) error {
	if err := prepare(dir); err != nil {
		return err
	}
	procs := b.Processes
	if procs == nil {
		procs = []monitor.Process{}
	}
	files := map[string][]byte{
		"README.md":      []byte(readme(b)),
		"env_info.md":    []byte(envInfo(b)),
		"gpu.json":       mustJSON(b.Check.GPU),
		"processes.json": mustJSON(struct{ Processes []monitor.Process }{procs}),
		"check.json":     mustJSON(b.Check),
		"history.json":   mustJSON(b.historyJSON()),
	}
	for _, name := range Files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			return fmt.Errorf("writing report %s: %w", path, err)
		}
	}
	return nil
}

// historyJSON is History with an empty list rather than null.
func (b Bundle) historyJSON() History {
	h := b.History
	if h.Events == nil {
		h.Events = []monitor.Event{}
	}
	return h
}

func prepare(dir string) error {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating report folder %s: %w", dir, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("opening report folder %s: %w", dir, err)
	case len(ents) > 0:
		return fmt.Errorf("report folder %s already holds files; choose an empty or new folder", dir)
	}
	return nil
}

func mustJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		// Every value here is plain data; a failure is a programming error.
		panic(fmt.Sprintf("report: encoding JSON: %v", err))
	}
	return append(b, '\n')
}

func readme(b Bundle) string {
	var s strings.Builder
	writef(&s, "# GPU Canary report\n\n")
	writef(&s, "Taken %s on %s (%s) by GPU Canary %s.\n\n", b.Time.Format(time.RFC3339), orUnknown(b.Host.Hostname), b.Host.describe(), b.Version)
	if b.Check.GPU.Simulated {
		writef(&s, "**The GPU in this report is simulated** (%s): it is not this machine's hardware.\n\n", b.Check.GPU.Source)
	}
	writef(&s, "Summary: %s.\n\n", b.Summary)
	writef(&s, "%s", b.Knowledge.line())
	writef(&s, "| file | holds |\n| --- | --- |\n")
	writef(&s, "| env_info.md | the machine, driver, GPUs and every environment with its packages and findings, for reading |\n")
	writef(&s, "| gpu.json | the GPU state as the driver reported it |\n")
	writef(&s, "| processes.json | the processes on the GPU and the ML processes off it, with their environment, libraries and verdicts (command lines redacted) |\n")
	writef(&s, "| check.json | the output of `gpucanary check --json` |\n")
	h := b.History
	note := ""
	if h.Damaged > 0 {
		note = fmt.Sprintf("; %d damaged lines of it were skipped", h.Damaged)
	}
	if h.Error != "" {
		note += "; it could not all be read (see the file)"
	}
	writef(&s, "| history.json | the newest %d events of GPU Canary's event history, newest first%s |\n", len(h.Events), note)
	return s.String()
}

func envInfo(b Bundle) string {
	var s strings.Builder
	g := b.Check.GPU
	writef(&s, "# Environment information\n\n")
	writef(&s, "- Taken: %s\n- OS: %s\n", b.Time.Format(time.RFC3339), b.Host.describe())
	if g.HasDriver() {
		driver := g.Driver
		if g.Library != "" {
			driver += " (read from " + g.Library + ")"
		}
		cuda := orUnknown(g.CUDADriver)
		if g.CUDADriver == "" && g.CUDADriverDerived != "" {
			cuda = "not given by the driver; at least " + g.CUDADriverDerived + ", derived from the driver version"
		}
		writef(&s, "- NVIDIA driver: %s\n- CUDA driver version: %s\n", driver, cuda)
	} else {
		writef(&s, "- NVIDIA driver: none (%s)\n", orUnknown(g.Error))
	}
	if g.Simulated {
		writef(&s, "- **GPU state simulated** from %s\n", strings.TrimPrefix(g.Source, "sim:"))
	}
	if len(g.Devices) > 0 {
		writef(&s, "\n## GPUs\n\n| # | name | architecture | compute capability | memory | UUID |\n| --- | --- | --- | --- | --- | --- |\n")
		for _, d := range g.Devices {
			writef(&s, "| %d | %s | %s | %s | %.1f GiB | %s |\n", d.Index, d.Name, orUnknown(d.Architecture), orUnknown(d.ComputeCapability), float64(d.MemoryTotalBytes)/(1<<30), d.UUID)
		}
	}
	for _, f := range b.Check.Findings {
		writef(&s, "\n- **%s** (%s): %s\n", f.Code, f.Severity, f.Message)
	}
	writef(&s, "\n## Environments\n")
	if len(b.Check.Envs) == 0 {
		writef(&s, "\nNone found.\n")
	}
	for _, e := range b.Check.Envs {
		writef(&s, "\n### %s\n\n- Verdict: %s\n- Manager: %s\n- Python: %s\n- Layout: %s\n", e.Path, e.Verdict, e.Installer, orUnknown(e.Python), e.Layout)
		if len(e.Packages) > 0 {
			writef(&s, "\n| package | version | build | CUDA | installed by |\n| --- | --- | --- | --- | --- |\n")
			names := make([]string, 0, len(e.Packages))
			for n := range e.Packages {
				names = append(names, n)
			}
			sortPackages(names)
			for _, n := range names {
				p := e.Packages[n]
				writef(&s, "| %s | %s | %s | %s | %s |\n", n, p.Version, buildOf(p), p.CUDA, p.Installer)
			}
		}
		if len(e.CUDALibs) > 0 {
			// What each CUDA library carries, read from its fat binary.
			writef(&s, "\n| CUDA library | package | kernels | CUDA runtime |\n| --- | --- | --- | --- |\n")
			for _, l := range e.CUDALibs {
				k := l.Kernels
				if l.Error != "" {
					k = "could not be read: " + l.Error
				}
				writef(&s, "| %s | %s | %s | %s |\n", l.File, l.Package, k, l.Runtime)
			}
		}
		for _, f := range e.Findings {
			writef(&s, "\n- **%s** (%s): %s\n", f.Code, f.Severity, f.Message)
			if f.Fix != "" {
				writef(&s, "  - fix: %s\n", code(f.Fix))
			}
		}
	}
	if len(b.Processes) > 0 {
		writef(&s, "\n## Processes on the GPU and ML processes off it\n\n| PID | verdict | GPU memory | environment | command |\n| --- | --- | --- | --- | --- |\n")
		for _, p := range b.Processes {
			mem := "n/a"
			if p.GPUMemoryBytes != nil {
				mem = fmt.Sprintf("%.1f GiB", float64(*p.GPUMemoryBytes)/(1<<30))
			}
			verdict := string(p.Verdict)
			if p.Graphics {
				verdict += " (graphics, not a job)"
			}
			writef(&s, "| %d | %s | %s | %s | %s |\n", p.PID, verdict, mem, p.EnvPath, cellCode(p.Command()))
		}
	}
	return s.String()
}

// writef writes to a Markdown file with every string argument made
// visible (human.Visible) and escaped as Markdown (mdArg): a path, a
// process's command or a package's metadata holding terminal escapes
// must not reach whoever cats the file, nor reorder its text with a bidi
// override, nor be read as HTML or markup by a Markdown viewer. Strings
// to show as code are passed as code or cellCode.
func writef(w *strings.Builder, format string, args ...any) {
	for i, a := range args {
		if v := reflect.ValueOf(a); v.Kind() == reflect.String {
			if _, ok := a.(code); !ok {
				if _, ok := a.(cellCode); !ok {
					a = v.String()
				}
			}
		}
		args[i] = mdArg(a)
	}
	fmt.Fprintf(w, format, args...)
}

func buildOf(p *pyenv.Package) string {
	if p.Build == "" {
		return ""
	}
	return string(p.Build)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// packageOrder is where the packages a reader looks for first stand in
// an environment's table: torch and its companions, then the other ML
// runtimes; the rest (nvidia-*, triton) follow by name.
var packageOrder = []string{pyenv.Torch, pyenv.TorchVision, pyenv.TorchAudio, pyenv.BitsAndBytes, pyenv.LlamaCppPython}

func sortPackages(names []string) {
	rank := func(n string) int {
		if i := slices.Index(packageOrder, n); i >= 0 {
			return i
		}
		return len(packageOrder)
	}
	sort.Slice(names, func(i, j int) bool {
		if ri, rj := rank(names[i]), rank(names[j]); ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
}
