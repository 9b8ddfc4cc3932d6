package fix

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// recordLimit bounds the stashed RECORD read: torch's lists some 15,000
// files in about 2 MB.
const recordLimit = 16 << 20

// pipLeading are the characters pip's AdjacentTempDirectory puts after
// the "~" that replaces a stashed folder's first characters, when the
// shorter names are taken (pip/_internal/utils/temp_dir.py).
const pipLeading = "-~.=%0123456789"

// withStashOfRecord adds to a plan made from pip's stash (Plan.Restores)
// the stash of every other top-level folder the stashed torch's own
// RECORD lists: a real torch wheel installs torchgen/ and functorch/
// beside torch/, and pip moved them aside with it (~orchgen, ~unctorch).
// They are that torch's, so the repair removes them with its own once
// the new torch is verified; a stash whose name matches none of them
// (another package's, another install's) stays. The planner names only
// what the environment's read listed; the RECORD is read here, where a
// repair is prepared, so that the rules' advice reads nothing more.
func withStashOfRecord(env *pyenv.Env, p fixplan.Plan) fixplan.Plan {
	if p.Restores == "" || env.SitePackages == "" {
		return p
	}
	b, err := safefs.ReadFile(filepath.Join(p.Restores, "RECORD"), recordLimit)
	if err != nil {
		return p // the stash's own entries are still removed
	}
	tops := recordTops(b)
	cleanup := slices.Clone(p.Cleanup)
	// The stashes the environment's read found (pyenv lists every "~"
	// entry of site-packages as one), whichever package they look like.
	stashes := slices.Clone(env.Problems)
	for _, pkg := range env.Packages {
		stashes = append(stashes, pkg.Problems...)
	}
	for _, pr := range stashes {
		n := filepath.Base(pr.Path)
		if pr.Kind != pyenv.ProblemPipStash || filepath.Dir(pr.Path) != env.SitePackages || slices.Contains(cleanup, pr.Path) {
			continue
		}
		if slices.ContainsFunc(tops, func(top string) bool { return pipStashOf(n, top) }) {
			cleanup = append(cleanup, pr.Path)
		}
	}
	slices.Sort(cleanup)
	p.Cleanup = cleanup
	return p
}

// recordTops are the top-level names of site-packages a RECORD lists
// (its first column's first path element), scripts and data installed
// outside it ("../../../bin/torchrun") aside.
func recordTops(record []byte) []string {
	var tops []string
	for line := range bytes.Lines(record) {
		path, _, _ := strings.Cut(string(line), ",")
		path = strings.Trim(path, "\"\r\n")
		top, _, _ := strings.Cut(strings.ReplaceAll(path, "\\", "/"), "/")
		if top == "" || top == "." || top == ".." || slices.Contains(tops, top) {
			continue
		}
		tops = append(tops, top)
	}
	return tops
}

// pipStashOf reports whether name is a name pip gives the folder top when
// it stashes it beside itself: "~" and some of pipLeading in place of
// top's first characters (torchgen -> ~orchgen, ~-rchgen), or before all
// of them once those are taken.
func pipStashOf(name, top string) bool {
	if !strings.HasPrefix(name, "~") || name == top {
		return false
	}
	lead := 1
	for lead < len(name) && strings.IndexByte(pipLeading, name[lead]) >= 0 {
		lead++
	}
	for i := 1; i <= lead && i <= len(top); i++ {
		// "~" + i-1 leading characters + top[i:], or the longer "~" + … + top.
		if name[i:] == top[i:] && len(name) == len(top) {
			return true
		}
	}
	for i := 1; i <= lead; i++ {
		if name[i:] == top {
			return true
		}
	}
	return false
}
