package pyenvtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// UserSite writes s's packages into home's user site for s's Python
// (~/.local/lib/pythonX.Y/site-packages), as `pip install --user` leaves
// them, with no environment around them, and returns the folder: the
// copy that shadows a conda env's or a prefix's own. s's Layout,
// Manager and CondaTorchBuild are not used.
func UserSite(home string, s Spec) (string, error) {
	if s.Python == "" {
		s.Python = "3.11"
	}
	s.CondaTorchBuild = ""
	site := filepath.Join(home, ".local", "lib", "python"+s.Python, "site-packages")
	w := &writer{root: filepath.Join(home, ".local"), s: s, py: s.Python, site: site}
	if strings.Count(w.py, ".") == 1 {
		w.py += ".7"
	}
	if err := os.MkdirAll(site, 0o755); err != nil {
		return "", fmt.Errorf("write user site %s: %w", site, err)
	}
	for _, step := range []func() error{w.torch, w.companions, w.llama, w.bnb, w.nvidia} {
		if err := step(); err != nil {
			return "", fmt.Errorf("write user site %s: %w", site, err)
		}
	}
	return site, nil
}
