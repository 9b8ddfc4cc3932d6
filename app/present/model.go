// Package present turns the engine's state and events into what a person
// sees: the tray's model (icon, tooltip, menu), notification texts and
// levels, the event kinds' names, evidence as a person reads it, the
// activate command for a shell, and the GPU graphs' samples. It is pure
// (no Fyne, no DBus), so both the resident tray process and the windows
// process share it, and it is tested without a display. What the command
// line says too (the summary line, counts, verdicts, paths under home)
// it takes from output/words rather than wording it again.
package present

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/shell"
	"github.com/gpucanary/gpucanary/output/words"
)

// The tray's model is computed by pure functions of the engine's state, so
// it is tested without a display; package tray only turns it into menus.
// Nothing here judges health: verdicts, findings and fix commands come
// from the engine, and the model only chooses how to show them.

// EnvEntry is one environment's line in the tray menu.
type EnvEntry struct {
	Label    string
	Path     string
	Fix      string // the fix command, "" when none
	Activate string
	Snoozed  bool
	// Reinstall is true when a reinstall would help (a CUDA torch, or
	// llama-cpp-python from its CUDA wheels); RepairLabel is the menu's
	// entry for it.
	Reinstall   bool
	RepairLabel string
	// Keep is true when the menu offers "Keep this CUDA build…" (a
	// CUDA torch, not guarded: CanKeep); Guarded when `gpucanary
	// guard` keeps it already.
	Keep, Guarded bool
}

// TrayModel is everything the tray shows.
type TrayModel struct {
	// Started is false until the engine's first full read: the menu says
	// "starting…" rather than "no environments".
	Started bool
	Icon    monitor.Overall
	Tooltip string
	Status  string
	Envs    []EnvEntry
	// Jobs are the GPU jobs running now, oldest first, as the menu lists
	// them (at most MenuJobs).
	Jobs   []JobEntry
	Paused bool
	// SettingsError is what is wrong with the settings file ("" when
	// nothing); the tray fills it, since the engine does not read that
	// file.
	SettingsError string
}

// Model computes the tray for a state at now (the jobs' run times).
func Model(s monitor.State, now time.Time, paused bool, snoozed func(string) bool) TrayModel {
	m := TrayModel{Paused: paused}
	if !s.Started {
		m.Icon, m.Status, m.Tooltip = monitor.OverallHealthy, "GPU Canary is starting…", "GPU Canary: starting…"
		return m
	}
	m.Started = true
	r := s.Check()
	m.Icon = r.Overall()
	m.Status = words.Summarize(s).String()
	m.Tooltip = "GPU Canary: " + m.Status + JobLines(s.Jobs, now)
	for _, j := range s.Jobs[:min(len(s.Jobs), MenuJobs)] {
		m.Jobs = append(m.Jobs, JobEntry{Label: JobLabel(j), PID: j.PID, Started: j.Started, Asked: j.Asked, Quiet: j.Quiet})
	}
	for _, e := range s.Envs {
		m.Envs = append(m.Envs, EnvEntry{
			Label: EnvLabel(e), Path: e.Path, Fix: FixOf(e), Activate: ActivateCommand(e.Env, os.Getenv("SHELL")),
			Snoozed: snoozed != nil && snoozed(e.Path), Reinstall: NeedsReinstall(e), RepairLabel: RepairLabel(e),
			Keep: CanKeep(e), Guarded: e.Guarded,
		})
	}
	return m
}

// CanKeep is true when the environment's torch is a CUDA build that no
// guard keeps yet: the tray offers to keep it ("Keep this CUDA build…",
// `gpucanary guard`), on any such environment and after a repair.
func CanKeep(e monitor.EnvReport) bool {
	t := e.Torch()
	return t != nil && t.Build == pyenv.BuildCUDA && !e.Guarded
}

// EnvLabel is "✗ llm/.venv — torch 2.10.0 CPU only", or with the app
// whose environment it is, "✓ ComfyUI_windows_portable/python_embeded
// (ComfyUI portable) — torch 2.7.0+cu128 CUDA 12.8"; an environment
// whose first error is about llama-cpp-python's build names that
// instead, "✗ llm/.venv — llama-cpp-python 0.3.4 CPU only", not the
// torch beside it.
func EnvLabel(e monitor.EnvReport) string {
	mark := map[monitor.Verdict]string{monitor.VerdictError: "✗", monitor.VerdictWarning: "!", monitor.VerdictOK: "✓"}[e.Verdict]
	if mark == "" {
		mark = "·"
	}
	name := filepath.Join(filepath.Base(filepath.Dir(e.Path)), filepath.Base(e.Path))
	if e.Env != nil && e.App != "" {
		name += " (" + e.App + ")" // the app whose environment it is
	}
	if pkg, p := storyOf(e); p != nil {
		return fmt.Sprintf("%s %s — %s %s %s", mark, name, pkg, p.Version, p.BuildText())
	}
	t := e.Torch()
	if t == nil {
		return fmt.Sprintf("%s %s — no torch", mark, name)
	}
	return fmt.Sprintf("%s %s — torch %s %s", mark, name, t.Version, t.BuildText())
}

// packageOf are the codes about a package other than torch whose build
// is the finding: an environment whose first error is one of them is
// labelled by that package, not by a torch that may be healthy.
var packageOf = map[string]string{
	finding.CodeLlamaCPPCPUBuild: pyenv.LlamaCppPython,
}

// storyOf is the package other than torch an environment's label names,
// errors first: the first error finding's when it is about one
// (packageOf), else none ("", nil) and the label names torch.
func storyOf(e monitor.EnvReport) (string, *pyenv.Package) {
	if e.Env == nil {
		return "", nil
	}
	for _, f := range e.Findings {
		if f.Severity != finding.SeverityError {
			continue
		}
		if name, ok := packageOf[f.Code]; ok && e.Packages[name] != nil {
			return name, e.Packages[name]
		}
		return "", nil
	}
	return "", nil
}

// NeedsReinstall is true when an error finding that a CUDA torch
// reinstall fixes is raised and the environment's interpreter can run
// the installer (finding.ReinstallHelps): the menu offers no repair that
// cannot run.
func NeedsReinstall(e monitor.EnvReport) bool { return finding.ReinstallHelps(e.Findings) }

// RepairLabel is the menu entry that repairs e: a CUDA torch reinstall,
// or, when llama-cpp-python's CPU build is the only thing a reinstall
// mends, llama-cpp-python's.
func RepairLabel(e monitor.EnvReport) string {
	for _, f := range e.Findings {
		if f.Severity == finding.SeverityError && finding.FixedByReinstall(f.Code) {
			return LabelReinstallTorch
		}
	}
	for _, f := range e.Findings {
		if f.Severity == finding.SeverityError && finding.FixedByLlamaReinstall(f.Code) {
			return LabelReinstallLlama
		}
	}
	return LabelReinstallTorch
}

// The menu's repair entries.
const (
	LabelReinstallTorch = "Reinstall CUDA torch…"
	LabelReinstallLlama = "Reinstall llama-cpp-python with CUDA…"
)

// FixOf is the first error finding's fix command.
func FixOf(e monitor.EnvReport) string {
	for _, f := range e.Findings {
		if f.Fix != "" && f.Severity == finding.SeverityError {
			return f.Fix
		}
	}
	for _, f := range e.Findings {
		if f.Fix != "" {
			return f.Fix
		}
	}
	return ""
}

// ActivateCommand is how to activate env in the user's shell (login, the
// path in $SHELL): PowerShell's Activate.ps1 for an environment in the
// Windows layout, conda's own command for conda, else the activate script
// of the login shell. Paths are quoted for the shell the command is
// pasted into (package shell).
func ActivateCommand(env *pyenv.Env, login string) string {
	if env == nil {
		return ""
	}
	if env.Kind == "conda" {
		return "conda activate " + shell.Quote(env.Path)
	}
	if env.Layout == pyenv.LayoutWindows {
		return shell.PowerShellScript(filepath.Join(env.Path, "Scripts", "Activate.ps1"))
	}
	switch filepath.Base(login) {
	case "fish":
		return "source " + shell.Quote(filepath.Join(env.Path, "bin", "activate.fish"))
	case "csh", "tcsh":
		return "source " + shell.Quote(filepath.Join(env.Path, "bin", "activate.csh"))
	}
	return "source " + shell.Quote(filepath.Join(env.Path, "bin", "activate"))
}

// JobEntry is a running GPU job in the tray's menu: its label, and
// whether one asked to be told of its end or quieted it.
type JobEntry struct {
	Label        string
	PID          int
	Started      time.Time
	Asked, Quiet bool
}

// MenuJobs is how many running jobs the tray's menu lists; the
// Processes window lists them all.
const MenuJobs = 5

// JobLabel is a running job as the tray's menu names it: its script and
// its GPUs ("train.py on GPU 0"), with nothing that changes while it
// runs (its run time, its utilisation), so the menu is not rebuilt, and
// closed under the pointer, at every poll.
func JobLabel(j monitor.JobRun) string {
	name := human.JobName(j.Command)
	if name == "" {
		name = fmt.Sprintf("PID %d", j.PID)
	}
	label := human.Truncate(name, 32)
	switch len(j.GPUs) {
	case 0:
	case 1:
		label += fmt.Sprintf(" on GPU %d", j.GPUs[0])
	default:
		gpus := make([]string, len(j.GPUs))
		for k, g := range slices.Sorted(slices.Values(j.GPUs)) {
			gpus[k] = fmt.Sprint(g)
		}
		label += " on GPUs " + strings.Join(gpus, ",")
	}
	return label
}

// TooltipJobs is how many running jobs the tooltip lists, one a line;
// the rest are counted ("and 2 more"), so the tooltip stays a glance
// (and within what a Windows tray tooltip holds: 127 characters are
// shown there, so a busy machine's list is cut there, the status first).
const TooltipJobs = 3

// JobLines are the tooltip's lines for the GPU jobs running now, each
// after a newline: "train.py · 1h15m · GPU 0 87 %", oldest first; ""
// when none runs. Run times are in whole minutes, so the tooltip does
// not change at every refresh.
func JobLines(jobs []monitor.JobRun, now time.Time) string {
	var b strings.Builder
	for i, j := range jobs {
		if i == TooltipJobs {
			fmt.Fprintf(&b, "\nand %d more", len(jobs)-TooltipJobs)
			break
		}
		name := human.JobName(j.Command)
		if name == "" {
			name = fmt.Sprintf("PID %d", j.PID)
		}
		b.WriteString("\n" + human.Truncate(name, 32))
		if !j.Started.IsZero() {
			b.WriteString(" · " + RunFor(now.Sub(j.Started)))
		}
		if len(j.GPUs) > 0 {
			gpus := make([]string, len(j.GPUs))
			for k, g := range slices.Sorted(slices.Values(j.GPUs)) {
				gpus[k] = fmt.Sprint(g)
			}
			word := "GPU "
			if len(gpus) > 1 {
				word = "GPUs "
			}
			b.WriteString(" · " + word + strings.Join(gpus, ","))
			if j.GPUPercent != nil {
				fmt.Fprintf(&b, " %.0f %%", *j.GPUPercent)
			}
		}
	}
	return b.String()
}

// RunFor is a running job's run time to the minute: "<1m", "42m",
// "1h15m", "3d4h".
func RunFor(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "<1m"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}
