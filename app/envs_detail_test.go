package app

import (
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// toggleGuarder is a guard kept in memory, that can be lifted.
type toggleGuarder struct {
	on       map[string]bool
	set, cut []string
	err      error
}

func (g *toggleGuarder) Guard(env string) ([]string, []string, error) {
	if g.err != nil {
		return nil, nil, g.err
	}
	g.on[env], g.set = true, append(g.set, env)
	return []string{"torch==2.7.1+cu128"}, []string{"wrote pip.conf"}, nil
}

func (g *toggleGuarder) Guarded(env string) bool { return g.on[env] }

func (g *toggleGuarder) Unguard(env string) ([]string, error) {
	if g.err != nil {
		return nil, g.err
	}
	delete(g.on, env)
	g.cut = append(g.cut, env)
	return []string{"gave back pip.conf"}, nil
}

// guardCheck is the environments window's guard toggle.
func guardCheck(t *testing.T, e *envsWindow) *widget.Check {
	t.Helper()
	c, _ := find(e.detail, func(o fyne.CanvasObject) bool {
		c, ok := o.(*widget.Check)
		return ok && c.Text == "Keep this CUDA build"
	}).(*widget.Check)
	if c == nil {
		t.Fatalf("no guard toggle in the detail of %s", e.selected)
	}
	return c
}

// TestGuardToggle: the toggle shows the guard the disk has; off asks
// and lifts it, on asks through "Keep this CUDA build" and sets it; a
// "no" or a refusal leaves it as the disk says; a CPU torch has nothing
// to keep.
func TestGuardToggle(t *testing.T) {
	g := &toggleGuarder{on: map[string]bool{comfyPath: true}}
	d := goldenDeps()
	d.Guard = g
	u := newUI(test.NewTempApp(t), d)
	u.wins.showEnvs()
	e := u.wins.envs
	e.selectEnv(comfyPath)
	c := guardCheck(t, e)
	if !c.Checked || c.Disabled() {
		t.Fatalf("guarded environment: checked %v, disabled %v", c.Checked, c.Disabled())
	}

	test.Tap(c) // off: asks first
	test.Tap(dialogButton(t, e.win, "Keep it"))
	if len(g.cut) != 0 || !guardCheck(t, e).Checked {
		t.Fatalf("declining lifted the guard (%v) or unticked the toggle", g.cut)
	}
	test.Tap(guardCheck(t, e))
	test.Tap(dialogButton(t, e.win, "Lift it"))
	if len(g.cut) != 1 || g.cut[0] != comfyPath || guardCheck(t, e).Checked {
		t.Fatalf("lifted %v; toggle checked %v", g.cut, guardCheck(t, e).Checked)
	}
	if l := strings.Join(labels(e.win.Canvas().Overlays().Top()), "\n"); !strings.Contains(l, "gave back pip.conf") {
		t.Errorf("the result does not say what was given back: %q", l)
	}

	test.Tap(guardCheck(t, e)) // on: the keep dialog
	test.Tap(dialogButton(t, e.win, "Not now"))
	if len(g.set) != 0 || guardCheck(t, e).Checked {
		t.Fatalf("declining set the guard (%v) or ticked the toggle", g.set)
	}
	g.err = errors.New("cannot guard: the state folder is read-only")
	test.Tap(guardCheck(t, e))
	test.Tap(dialogButton(t, e.win, "Keep it"))
	if guardCheck(t, e).Checked {
		t.Error("a refused guard shows as set")
	}
	g.err = nil
	test.Tap(guardCheck(t, e))
	test.Tap(dialogButton(t, e.win, "Keep it"))
	if len(g.set) != 1 || !guardCheck(t, e).Checked {
		t.Fatalf("set %v; toggle checked %v", g.set, guardCheck(t, e).Checked)
	}

	e.selectEnv("/home/ada/work/llm/.venv") // torch is a CPU build
	if c := guardCheck(t, e); !c.Disabled() || c.Checked {
		t.Errorf("CPU torch: checked %v, disabled %v", c.Checked, c.Disabled())
	}
}
