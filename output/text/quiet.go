package text

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/output/words"
)

// quietOrder splits check's environments into those shown whole, worst
// first (errors, warnings, then the rest, each in the order read), and the
// bare ones: no torch, nothing found, none of the packages check lists,
// not named on the command line. Nine pyenv interpreters without torch
// took 27 lines before the first finding; they are one line now.
func quietOrder(envs []monitor.EnvReport) (shown, bare []monitor.EnvReport) {
	for _, e := range envs {
		if isBare(e) {
			bare = append(bare, e)
		} else {
			shown = append(shown, e)
		}
	}
	slices.SortStableFunc(shown, func(a, b monitor.EnvReport) int { return verdictRank(a.Verdict) - verdictRank(b.Verdict) })
	return shown, bare
}

func verdictRank(v monitor.Verdict) int {
	switch v {
	case monitor.VerdictError:
		return 0
	case monitor.VerdictWarning:
		return 1
	case monitor.VerdictNoTorch:
		return 3
	}
	return 2
}

// isBare reports whether e has nothing to show but its path.
func isBare(e monitor.EnvReport) bool {
	if e.Env == nil || e.Verdict != monitor.VerdictNoTorch || len(e.Findings) > 0 || len(e.GuardChanged) > 0 || e.Via == "argument" {
		return false
	}
	for _, name := range listed {
		if e.Packages[name] != nil {
			return false
		}
	}
	return true
}

// listed are the packages check shows beneath an environment.
var listed = []string{pyenv.Torch, pyenv.TorchVision, pyenv.TorchAudio, pyenv.BitsAndBytes, pyenv.LlamaCppPython}

// bare prints the bare environments, one line per manager:
// "9 environments without torch (pyenv): ~/.pyenv/versions/{2.7.18, 3.8.19, …}".
func (p Printer) bare(envs []monitor.EnvReport) {
	var order []string
	groups := map[string][]string{}
	for _, e := range envs {
		m := words.Manager(e)
		if _, ok := groups[m]; !ok {
			order = append(order, m)
		}
		groups[m] = append(groups[m], p.short(e.Path))
	}
	if len(order) > 0 {
		p.printf("\n")
	}
	for _, m := range order {
		paths := groups[m]
		p.printf("%s %s\n", p.paint(dim, words.Count(len(paths), "environment", "environments")+" without torch ("+m+"):"), p.paint(dim, folderList(paths)))
	}
}

// folderList writes paths that share one parent as parent/{a, b}, others
// comma-separated.
func folderList(paths []string) string {
	if len(paths) == 1 {
		return paths[0]
	}
	parent := filepath.Dir(paths[0])
	names := make([]string, len(paths))
	for i, path := range paths {
		if filepath.Dir(path) != parent {
			return strings.Join(paths, ", ")
		}
		names[i] = filepath.Base(path)
	}
	return filepath.Join(parent, "{"+strings.Join(names, ", ")+"}")
}
