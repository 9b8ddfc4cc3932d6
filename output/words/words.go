// Package words is the text for people that every view shares: the
// command line, the tray, the windows, notifications and the evidence
// bundle say a process's cells, a path under home, a verdict, how many
// jobs and broken environments there are, the one summary of a machine
// (Summarize) and a search cut short with these functions, so that a
// thing is said one way wherever it is read. Plain words with no view
// below it (bytes, durations, escapes) are monitor/human's. It holds no layout (columns' widths,
// colours, Fyne widgets stay with each view) and imports neither app/
// nor the engine, so both output/text and app/ can use it.
package words

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/human"
)

// Short writes path under home as ~/… (home itself as ~); "" home, or a
// path elsewhere, is path unchanged.
func Short(home, path string) string {
	if home == "" || path == "" {
		return path
	}
	if rel, err := filepath.Rel(home, path); err == nil && filepath.IsAbs(path) && !strings.HasPrefix(rel, "..") {
		if rel == "." {
			return "~"
		}
		return filepath.Join("~", rel)
	}
	return path
}

// TildeIn writes every mention of the folder home (followed by a
// separator) in s, a command line or a message, as ~.
func TildeIn(home, s string) string { return human.TildeIn(home, s) }

// Count is n things, singular or plural: "1 env", "3 envs".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// NoWorkloads is what ps and the processes window say when no process
// holds GPU memory or has an ML runtime loaded.
const NoWorkloads = "No GPU workloads: no process holds GPU memory or has an ML runtime loaded."

// NotAnEnv says why a folder a person named is not taken, after "PATH is"
// or "the folder is": the command line's finding and the window's "Add
// environment…" say it alike.
const NotAnEnv = "not a Python environment (no pyvenv.cfg, conda-meta or interpreter), nor a project folder of a manager GPU Canary knows"

// Unmark writes a message's Markdown code spans (“uv run” written
// `uv run`, as the terminal shows messages) in quotation marks, for the
// views that show plain text: notifications and dialogs, where a
// backtick is only noise. A lone backtick (a folder named so) stays.
func Unmark(s string) string {
	var out strings.Builder
	for {
		open := strings.IndexByte(s, '`')
		if open < 0 {
			break
		}
		end := strings.IndexByte(s[open+1:], '`')
		if end < 0 {
			break
		}
		out.WriteString(s[:open])
		out.WriteString("“" + s[open+1:open+1+end] + "”")
		s = s[open+1+end+1:]
	}
	out.WriteString(s)
	return out.String()
}
