// Package plantext is a repair plan (fixplan.Plan) in words, once for both
// places that show one before it runs: `gpucanary fix` prints it as
// labelled lines, and the windows ask with it in a dialog. It is its own
// package so that the other outputs (check, ps, watch) do not import the
// repair planner.
package plantext

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/fixplan"
)

// Pins names pins as a plan shows them: "torch 2.5.1+cu124, torchvision 0.20.1+cu124".
func Pins(pins []fixplan.Pin) string {
	names := make([]string, len(pins))
	for i, pin := range pins {
		names[i] = pin.Name + " " + pin.Version
	}
	return strings.Join(names, ", ")
}

// Write prints p as `gpucanary fix` shows it before asking: what it
// installs (or removes) from where, with which command, why, and what
// else changes. simulated says the GPU was simulated (--gpu-sim).
func Write(w io.Writer, p fixplan.Plan, simulated bool) {
	fmt.Fprintf(w, "Plan for %s\n", p.Env)
	if p.Installer != "" {
		fmt.Fprintf(w, "  installer: %s\n", p.Installer)
	}
	switch {
	case len(p.Removes) > 0:
		fmt.Fprintf(w, "  removes:   %s from %s\n", Pins(p.Removes), p.RemoveFrom)
		if len(p.Packages) > 0 {
			fmt.Fprintf(w, "  imports:   %s (CUDA %s) once it is gone\n", Pins(p.Packages), p.CUDA)
		}
	case len(p.Packages) > 0:
		fmt.Fprintf(w, "  packages:  %s\n", Pins(p.Packages))
	}
	if p.Variant != "" {
		fmt.Fprintf(w, "  variant:   %s (CUDA %s)\n  index:     %s\n", p.Variant, p.CUDA, p.ShownIndex())
	}
	if p.Upgrade {
		fmt.Fprintln(w, "  NOTE:      this installs a newer torch than the one installed (see why below)")
	}
	if p.Downgrade {
		fmt.Fprintln(w, "  NOTE:      this installs an older torch than the one installed (see why below)")
	}
	label := "changes:  "
	switch {
	case p.Upgrade:
		label = "upgrade:  "
	case p.Downgrade:
		label = "downgrade:"
	}
	for _, c := range p.Consequences {
		fmt.Fprintf(w, "  %s %s\n", label, c)
	}
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "  WARNING:   %s\n", warn)
	}
	if simulated {
		fmt.Fprintln(w, "  GPU:       simulated (--gpu-sim)")
	}
	for _, r := range p.Reasons {
		fmt.Fprintf(w, "  why:       %s\n", r)
	}
	if len(p.Argv) > 0 {
		fmt.Fprintf(w, "  command:   %s\n", p.Command())
	}
	for _, c := range p.Cleanup {
		fmt.Fprintf(w, "  cleanup:   %s (left by an interrupted install; removed once the new torch is verified)\n", c)
	}
}

// Ask is p as a dialog asks before running it: its title, what is done
// in one plain sentence ("Install torch 2.5.1+cu124 (CUDA 12.4) from the
// PyTorch index with this environment's pip."), why (the plan's reasons,
// one paragraph), what else changes (each a line of its own) and the
// exact command, for the dialog's details. It names no installer flag and
// no option of the command line: those are the command's.
type Ask struct {
	Title, Sentence, Why string
	Changes              []string
	Command              string
}

// AskFor is the dialog's words for p on the environment env; short
// writes a path as the view shows it (~ for home).
func AskFor(p fixplan.Plan, env string, short func(string) string) Ask {
	title, verb := "Reinstall CUDA torch", "Install"
	if p.Package != "" {
		title = "Reinstall " + p.Package + " with CUDA"
	}
	switch {
	case p.Undoes != "":
		title, verb = "Undo the repair", "Put back"
	case p.Upgrade:
		// No build of the installed torch runs here: say what else changes.
		title, verb = "Upgrade torch", "Upgrade to"
	case p.Downgrade:
		// No build of it or a newer release has code for a GPU here.
		title, verb = "Go back to an older torch", "Install the older"
	}
	what := Pins(p.Packages)
	if p.CUDA != "" && p.Undoes == "" {
		what += " (CUDA " + p.CUDA + ")"
	}
	a := Ask{Title: title, Why: sentences(p.Reasons), Changes: p.Consequences, Command: p.Command(),
		Sentence: fmt.Sprintf("%s %s in %s from %s with %s.", verb, what, short(env), indexName(p), installerName(p))}
	if len(p.Removes) > 0 {
		// A copy ahead of the environment's own is taken away, not
		// reinstalled (fix's removalPlan).
		a.Title = "Remove the torch that hides this environment's"
		a.Sentence = fmt.Sprintf("Remove %s from %s with %s, so that this environment's own torch is the one Python loads.",
			Pins(p.Removes), short(p.RemoveFrom), installerName(p))
	}
	return a
}

// indexName says where a plan's packages come from: the PyTorch index
// (download.pytorch.org), the default index, or a mirror by its address.
func indexName(p fixplan.Plan) string {
	switch {
	case p.Index == "":
		return "the default package index"
	case strings.HasPrefix(p.Index, fixplan.DefaultIndexBase+"/"):
		return "the PyTorch index"
	}
	return "the index at " + p.ShownIndex()
}

// installerName is the installer as a person knows it: pip run with the
// environment's own Python is "this environment's pip"; an environment
// without a pip of its own gets another Python's, pointed at it with
// --python, and is told so.
func installerName(p fixplan.Plan) string {
	switch p.Installer {
	case "pip":
		if host, ok := pipFor(p.Argv); ok {
			return host + "'s pip (this environment has none of its own)"
		}
		return "this environment's pip"
	case "":
		return "its installer"
	}
	return p.Installer
}

// pipFor tells whether argv runs pip with --python (pip installing into
// another Python's environment), and which interpreter runs it ("python3",
// as its file is named).
func pipFor(argv []string) (string, bool) {
	if len(argv) < 4 || argv[1] != "-m" || argv[2] != "pip" || !slices.Contains(argv[3:], "--python") {
		return "", false
	}
	base := argv[0][strings.LastIndexAny(argv[0], `/\`)+1:]
	return strings.TrimSuffix(strings.TrimSuffix(base, ".exe"), ".EXE"), true
}

// sentences joins reasons into a paragraph, each starting with a capital
// (but torch, a package's name) and ending with a stop.
func sentences(reasons []string) string {
	out := make([]string, 0, len(reasons))
	for _, r := range reasons {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		if !strings.HasPrefix(r, "torch") { // a package's name is written as it is
			r = strings.ToUpper(r[:1]) + r[1:]
		}
		if !strings.HasSuffix(r, ".") {
			r += "."
		}
		out = append(out, r)
	}
	return strings.Join(out, " ")
}
