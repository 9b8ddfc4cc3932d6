package present

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor"
)

// Notification is the title and body of a desktop notification for e: the
// environment (or the process), what happened in a person's words (the
// engine's message), and the fix. reinstall says whether the tray menu
// offers a reinstall for the environment; then the fix points there rather
// than at a long command (which the menu copies).
func Notification(e monitor.Event, reinstall bool) (title, body string) {
	where := ShortPath(e.Env)
	switch e.Kind {
	case monitor.KindCUDAWheelReplaced:
		title = "torch lost its CUDA build in " + where
	case monitor.KindTorchChanged:
		title = "torch changed in " + where
	case monitor.KindTorchRemoved:
		title = "torch was removed from " + where
	case monitor.KindJobOnCPU:
		title = "A GPU job is running on the CPU"
		if where != "" {
			title += " (" + where + ")"
		}
	case monitor.KindJobOnCPUCleared:
		title = "The job is no longer stuck on the CPU"
	case monitor.KindFindingRaised:
		title = "Problem in " + where
		if e.Env == "" {
			title = "GPU Canary"
		}
		if e.Finding != nil {
			title += ": " + e.Finding.Code
		}
	case monitor.KindFindingCleared:
		title = "Resolved in " + where
		if e.Env == "" {
			title = "Resolved"
		}
	case monitor.KindGPUStateChanged:
		title = "GPU state changed"
	default:
		title = "GPU Canary"
	}
	body = TildeHome(e.Message)
	switch {
	case e.Kind == monitor.KindJobOnCPUCleared || e.Kind == monitor.KindFindingCleared:
	case reinstall && e.Kind == monitor.KindJobOnCPU:
		body += " Fix: Reinstall from the tray menu, then restart the job."
	case reinstall:
		body += " Fix: Reinstall from the tray menu."
	case e.Fix != "":
		body += " Fix: " + TildeHome(e.Fix)
	}
	return title, body
}

// ShortPath writes a path under the home directory as ~/….
func ShortPath(p string) string {
	if p == "" {
		return ""
	}
	if h := homeDir(); h != "" && strings.HasPrefix(p, h+string(filepath.Separator)) {
		return "~" + p[len(h):]
	}
	return p
}

// TildeHome writes every mention of the home directory in s as ~.
func TildeHome(s string) string {
	if h := homeDir(); h != "" && h != "/" {
		return strings.ReplaceAll(s, h+string(filepath.Separator), "~"+string(filepath.Separator))
	}
	return s
}

func homeDir() string {
	h, _ := os.UserHomeDir()
	return h
}
