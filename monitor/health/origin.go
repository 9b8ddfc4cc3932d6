package health

import (
	"fmt"
	"maps"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// origin adds to the findings about torch where import loads it from,
// when that is not the environment's own site-packages: a user-site or
// .pth-added copy that shadows the environment's own torch is the one
// judged, and a person reading "CPU build" must learn it is that copy,
// and which torch it hides.
func (c *envCheck) origin(t *pyenv.Package, about []finding.Finding) {
	folder, says, ok := c.env.Origin(t)
	if !ok {
		return
	}
	note := fmt.Sprintf(" This torch is loaded from %s (%s)", folder, says)
	if sh := t.Shadows; sh != nil {
		note += fmt.Sprintf("; it hides torch %s (%s) in %s, which is never imported while it is there", sh.Version, sh.BuildText(), sh.Site)
	}
	for i := range about {
		about[i].Message += note + "."
	}
}

// raisedWithout is the rank of the severity at which the rules would
// raise code about this environment were t gone from where it is: the
// torch it shadows is then what import loads (none when it shadows
// none).
func (c *envCheck) raisedWithout(t *pyenv.Package, code string) int {
	after := *c.env
	after.Packages = maps.Clone(c.env.Packages)
	if t.Shadows != nil {
		after.Packages[pyenv.Torch] = t.Shadows
	} else {
		delete(after.Packages, pyenv.Torch)
	}
	rank := 0
	for _, f := range CheckEnv(&after, c.g, Options{Getenv: c.o.Getenv}) {
		if f.Code == code {
			rank = max(rank, f.Severity.Rank())
		}
	}
	return rank
}

// pathCode warns that code GPU Canary does not run changes the import
// path: torch was judged where import finds it without that code, which
// may not be where Python finds it.
func (c *envCheck) pathCode(t *pyenv.Package) {
	pc := c.env.PathCode
	if len(pc) == 0 {
		return
	}
	lines := make([]string, 0, len(pc))
	for _, e := range pc {
		lines = append(lines, e.File+": "+e.Says)
	}
	c.add(finding.CodeImportPathCode, finding.SeverityWarning,
		fmt.Sprintf("The import path of this environment is changed by code GPU Canary does not run (%s), so the torch judged here (%s, read from %s) may not be the one Python imports. Check which one it is: %s -c 'import torch; print(torch.__file__, torch.__version__)'.",
			strings.Join(lines, "; "), t.Version, t.Site, c.env.Interpreter()),
		"", pc)
}
