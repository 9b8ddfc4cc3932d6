package fixplan

import (
	"fmt"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/shell"
)

// editableConsequences says, for each pin installed in env as an editable
// install (`pip install -e ~/src/pytorch`, direct_url.json's dir_info),
// that the plan takes it away: pip and uv uninstall an editable install
// before they install a wheel of the same name, so after the repair
// `import torch` loads the wheel, not the developer's checkout. The
// checkout's files are left alone, which is said too: it is what tells
// the person how to go back. removed is true for a removal plan, which
// puts nothing in its place.
func editableConsequences(env *pyenv.Env, pins []Pin, removed bool) []string {
	var out []string
	for _, pin := range pins {
		pkg := env.Packages[pin.Name]
		if pkg == nil || !pkg.Editable {
			continue
		}
		src := pkg.SourceDir()
		from := src
		if from == "" {
			from = pkg.DirectURL
		}
		what := fmt.Sprintf("the %s %s wheel is put in its place", pin.Name, pin.Version)
		if removed {
			what = "nothing of it stays in this environment"
		}
		line := fmt.Sprintf("%s is an editable install of %s (pip install -e): the repair uninstalls it and %s, so `import %s` no longer loads your checkout. The checkout itself is not deleted",
			pin.Name, from, what, pin.Name)
		if src != "" {
			line += fmt.Sprintf("; installing it editable again (pip install -e %s) makes it the one imported", shell.Quote(src))
		}
		out = append(out, line)
	}
	return out
}
