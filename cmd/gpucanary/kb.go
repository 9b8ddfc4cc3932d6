package main

// `gpucanary kb`: what GPU Canary knows about torch releases, their CUDA
// variants and the drivers they need, and `gpucanary kb refresh`, which
// teaches it the releases a wheel index lists.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/kb"
)

const kbHelp = `Usage: gpucanary kb refresh [--index-url URL]
       gpucanary kb [--json]

Shows what GPU Canary knows: the newest torch release and its CUDA
variants with the GPU architectures each carries per platform, the driver
each CUDA version needs, the day the built-in facts were last checked, and
the knowledge overlays read over them (JSON files in /etc/gpucanary/kb.d
and in kb.d of the settings folder: docs/guide.md, "Knowledge").

kb refresh reads the torch page of a PyTorch wheel index (URL/torch/) and
writes the releases and CUDA variants it lists beyond the built-in facts to
kb-refresh.json in the settings folder, so a newer torch is known without a
new GPU Canary. It only runs when asked (or daily when the kb_refresh
setting is on).

Flags:
  --json               print everything known as JSON: its releases, arches,
                       drivers and gpus lists take the rows an overlay takes
  --index-url URL      kb refresh: the index to read (default the index_base
                       setting, https://download.pytorch.org/whl)

Examples:
  gpucanary kb
  gpucanary kb --json
  gpucanary kb refresh
  gpucanary kb refresh --index-url https://mirror.example/whl

Exit status: 0; 1 when kb refresh could not read the index or write the
overlay; 2 on usage.
`

func kbFlags(fs *flag.FlagSet, g *globals) runFunc {
	asJSON := fs.Bool("json", false, "print everything known as JSON")
	index := fs.String("index-url", "", "kb refresh: the wheel index to read")
	return func(ctx context.Context, std stdio) int {
		args := fs.Args()
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		switch {
		case len(args) == 1 && args[0] == "refresh":
			if given["json"] {
				fmt.Fprintln(std.err, "gpucanary kb: --json is for gpucanary kb, not kb refresh")
				return exitUsage
			}
			base := *index
			if base == "" {
				base = g.cfg.IndexBase
			}
			return cmdKBRefresh(ctx, base, std)
		case len(args) == 1:
			fmt.Fprintf(std.err, "gpucanary kb: %q is not a kb command (kb refresh is the one there is)\n%s", args[0], kbHelp)
			return exitUsage
		case given["index-url"]:
			fmt.Fprintln(std.err, "gpucanary kb: --index-url is for gpucanary kb refresh")
			return exitUsage
		}
		warnOverlays(std.err, "kb")
		if *asJSON {
			return printKBJSON(std.out)
		}
		printKB(std.out)
		return exitOK
	}
}

// warnOverlays says on stderr which overlay files were ignored and why:
// they never stop a command.
func warnOverlays(w io.Writer, command string) {
	for _, msg := range kb.OverlayWarnings() {
		fmt.Fprintf(w, "gpucanary %s: warning: %s\n", command, msg)
	}
}

// kbJSON is `kb --json`: the snapshot, and where overlays are looked for.
type kbJSON struct {
	kb.Snapshot
	OverlayDirs    []string `json:"overlay_dirs"`
	RefreshOverlay string   `json:"refresh_overlay,omitempty"`
}

func printKBJSON(w io.Writer) int {
	out := kbJSON{Snapshot: kb.Snap(), OverlayDirs: kb.OverlayDirs()}
	out.RefreshOverlay, _ = kb.RefreshOverlayPath()
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		fmt.Fprintf(w, "gpucanary kb: encoding JSON: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(w, "%s\n", b)
	return exitOK
}

func printKB(w io.Writer) {
	s := kb.Snap()
	fmt.Fprintf(w, "GPU Canary's facts are as of %s%s.\n\n", s.AsOf, overlayCount(s.Overlays))
	n := s.Newest
	unverified := ""
	if r, ok := kb.ReleaseFor(n.Patch); ok && r.PyPIUnverified {
		unverified = ", not verified"
	}
	fmt.Fprintf(w, "Newest torch: %s (%s); PyPI's Linux wheel is a CUDA %s build%s.\n", n.Minor, n.Patch, n.PyPILinuxCUDA, unverified)
	for _, v := range n.Variants {
		fmt.Fprintf(w, "  %-7s CUDA %s\n", v.Tag, v.CUDA)
		for _, p := range []string{kb.PlatformLinuxX86, kb.PlatformLinuxARM, kb.PlatformWindows} {
			a, ok := v.Arches[p]
			if !ok {
				continue
			}
			fmt.Fprintf(w, "          %-15s %s\n", p+":", archWords(a))
		}
	}
	fmt.Fprintf(w, "\nDrivers (the least driver with every feature of each CUDA version; any build of a major runs from its minor-version floor):\n")
	fmt.Fprintf(w, "  %-6s %-24s %s\n", "CUDA", "Linux", "Windows")
	for i := len(s.Drivers) - 1; i >= 0; i-- {
		d := s.Drivers[i]
		lf, _ := kb.DriverFloorFor(d.CUDA, "linux")
		wf, _ := kb.DriverFloorFor(d.CUDA, "windows")
		linux := lf.Full + " (" + lf.MinorCompat + ")"
		if lf.Unverified {
			linux += " *"
		}
		windows := wf.Full + " (" + wf.MinorCompat + ")"
		switch {
		case wf.NoOwnFloor:
			windows = "N/A: the R" + wf.MinorCompat + " branch *"
		case wf.Unverified:
			windows += " *"
		}
		fmt.Fprintf(w, "  %-6s %-24s %s\n", d.CUDA, linux, windows)
	}
	fmt.Fprintf(w, "  (minor-version floor in parentheses; * not verified against NVIDIA's own table)\n")
	fmt.Fprintf(w, "\nOverlays:\n")
	if len(s.Overlays) == 0 {
		fmt.Fprintf(w, "  none read. GPU Canary reads *.json in %s.\n", strings.Join(kb.OverlayDirs(), " and "))
	}
	for _, o := range s.Overlays {
		if o.Error != "" {
			fmt.Fprintf(w, "  %s: ignored: %s\n", o.Path, o.Error)
			continue
		}
		fmt.Fprintf(w, "  %s (%d rows)\n", o.Path, o.Rows)
	}
}

// overlayCount is ", with 2 overlays" or "".
func overlayCount(os []kb.OverlayFile) string {
	read := 0
	for _, o := range os {
		if o.Error == "" {
			read++
		}
	}
	switch read {
	case 0:
		return ""
	case 1:
		return ", with 1 overlay read over them"
	}
	return fmt.Sprintf(", with %d overlays read over them", read)
}

// archWords writes an arch list: "sm_75 sm_80 … sm_120, PTX compute_120".
func archWords(a kb.ArchList) string {
	var sass, ptx []string
	for _, cc := range a.SASS {
		sass = append(sass, "sm_"+strings.ReplaceAll(cc, ".", ""))
	}
	for _, cc := range a.PTX {
		ptx = append(ptx, "compute_"+strings.ReplaceAll(cc, ".", ""))
	}
	s := strings.Join(sass, " ")
	if len(ptx) > 0 {
		s += ", PTX " + strings.Join(ptx, " ")
	}
	if a.Unverified {
		s += " (not verified)"
	}
	return s
}
