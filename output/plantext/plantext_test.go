package plantext

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/fixplan"
)

// TestPlanSaidOnce: the command line's lines and the dialog's words of a
// plan name the same pins, from the same index, with the same installer;
// an upgrade and a removal are titled as what they are. (The whole text
// of `gpucanary fix`'s plan is cmd/gpucanary's fix-plan golden file.)
func TestPlanSaidOnce(t *testing.T) {
	pins := []fixplan.Pin{{Name: "torch", Version: "2.5.1+cu124"}, {Name: "torchvision", Version: "0.20.1+cu124"}}
	short := func(p string) string { return strings.Replace(p, "/home/ada", "~", 1) }
	for _, tc := range []struct {
		name     string
		plan     fixplan.Plan
		title    string
		what     string
		cliSays  string
		cliLacks string
	}{
		{"reinstall", fixplan.Plan{Env: "/home/ada/llm/.venv", Installer: "uv", Packages: pins, CUDA: "12.4", Index: "https://download.pytorch.org/whl/cu124", Reasons: []string{"a CPU build"}},
			"Reinstall CUDA torch", "Install torch 2.5.1+cu124, torchvision 0.20.1+cu124 (CUDA 12.4) in ~/llm/.venv from the PyTorch index with uv.",
			"  packages:  torch 2.5.1+cu124, torchvision 0.20.1+cu124\n", "NOTE"},
		{"upgrade", fixplan.Plan{Env: "/home/ada/llm/.venv", Installer: "pip", Packages: pins[:1], Index: "https://download.pytorch.org/whl/cu124", Upgrade: true, Consequences: []string{"torch 2.1.0 → 2.5.1"}},
			"Upgrade torch", "Upgrade to torch 2.5.1+cu124 in ~/llm/.venv from the PyTorch index with this environment's pip.",
			"  upgrade:   torch 2.1.0 → 2.5.1\n", "changes:"},
		{"removal", fixplan.Plan{Env: "/home/ada/llm/.venv", Installer: "pip", Removes: pins[:1], RemoveFrom: "/home/ada/.local/lib/python3.11/site-packages"},
			"Remove the torch that hides this environment's", "Remove torch 2.5.1+cu124 from ~/.local/lib/python3.11/site-packages with this environment's pip, so that this environment's own torch is the one Python loads.",
			"  removes:   torch 2.5.1+cu124 from /home/ada/.local/lib/python3.11/site-packages\n", "packages:"},
		{"a mirror, an undo", fixplan.Plan{Env: "/home/ada/llm/.venv", Installer: "pip", Packages: []fixplan.Pin{{Name: "torch", Version: "2.5.1+cpu"}}, Index: "https://mirror.example/whl/cpu", Undoes: "/state/j.jsonl"},
			"Undo the repair", "Put back torch 2.5.1+cpu in ~/llm/.venv from the index at https://mirror.example/whl/cpu with this environment's pip.",
			"  packages:  torch 2.5.1+cpu\n", "NOTE"},
		{"another Python's pip", fixplan.Plan{Env: "/home/ada/chatbot/.venv", Installer: "pip", Packages: pins[:1], CUDA: "12.4", Index: "https://download.pytorch.org/whl/cu124",
			Argv: []string{"/usr/bin/python3", "-m", "pip", "--python", "/home/ada/chatbot/.venv/bin/python", "install", "torch==2.5.1+cu124"}},
			"Reinstall CUDA torch", "Install torch 2.5.1+cu124 (CUDA 12.4) in ~/chatbot/.venv from the PyTorch index with python3's pip (this environment has none of its own).",
			"  packages:  torch 2.5.1+cu124\n", "NOTE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := AskFor(tc.plan, tc.plan.Env, short)
			if a.Title != tc.title || a.Sentence != tc.what {
				t.Errorf("AskFor = %q, %q; want %q, %q", a.Title, a.Sentence, tc.title, tc.what)
			}
			if a.Command != tc.plan.Command() {
				t.Errorf("the details' command %q, want the plan's %q", a.Command, tc.plan.Command())
			}
			for _, flag := range []string{"--force", "--no-deps", "--force-reinstall", "`"} {
				if strings.Contains(a.Sentence+a.Why, flag) {
					t.Errorf("the dialog's words name %q: %q %q", flag, a.Sentence, a.Why)
				}
			}
			var b bytes.Buffer
			Write(&b, tc.plan, false)
			if !strings.Contains(b.String(), tc.cliSays) || strings.Contains(b.String(), tc.cliLacks) {
				t.Errorf("Write:\n%s\nwant %q, not %q", b.String(), tc.cliSays, tc.cliLacks)
			}
		})
	}
}
