package app

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"

	"github.com/gpucanary/gpucanary/app/present"
)

// Guarder sets the guard that keeps an environment's CUDA torch
// (monitor/guard, as `gpucanary guard` does); cmd/gpucanary passes it.
type Guarder interface {
	// Guard sets it and says what it wrote, one line a file.
	Guard(env string) (pins, lines []string, err error)
	Guarded(env string) bool
}

// keepText is what the dialog says a guard does before it asks.
const keepText = "GPU Canary will write a constraints file and name it in this environment's own installer config " +
	"(pip.conf or pip.ini; conda's pinned file; a uv project's pyproject.toml), so that a later install asking for " +
	"another torch fails instead of replacing this CUDA build. Each file says GPU Canary wrote it; " +
	"`gpucanary unguard` gives every file back as it was."

// keep is the tray's "Keep this CUDA build…": it says what the guard does,
// asks, and sets it.
func (u *ui) keep(env string) {
	if u.d.Guard == nil {
		return
	}
	win := u.wins.host()
	u.wins.show(win)
	u.offerKeep(env, "", win)
}

// offerKeep asks whether to keep env's CUDA build (after intro, the text
// of what led here: a repair's result) and sets the guard on yes.
func (u *ui) offerKeep(env, intro string, win fyne.Window) { u.askKeep(env, intro, win, func() {}) }

// askKeep is offerKeep, calling then once the dialog is answered and the
// guard set or refused: the environments window's toggle shows the
// state the disk has then.
func (u *ui) askKeep(env, intro string, win fyne.Window, then func()) {
	title := "Keep this CUDA build"
	if intro != "" {
		title = "Reinstalled: keep this CUDA build?"
	}
	msg := intro + "Keep the CUDA build of torch in " + present.ShortPath(env) + "?\n\n" + wrap(keepText)
	d := dialog.NewConfirm(title, msg, func(ok bool) {
		if ok {
			u.setGuard(env, win)
		}
		then()
	}, win)
	d.SetConfirmText("Keep it")
	d.SetDismissText("Not now")
	d.Show()
}

// setGuard sets the guard and shows what was written, or why not.
func (u *ui) setGuard(env string, win fyne.Window) {
	pins, lines, err := u.d.Guard.Guard(env)
	if err != nil {
		dialog.ShowInformation("Not kept", wrap(err.Error()+"."), win)
		return
	}
	msg := "Installs in " + present.ShortPath(env) + " now keep:\n"
	for _, p := range pins {
		msg += p + "\n"
	}
	msg += "\n"
	for _, l := range lines {
		msg += wrap("• "+l) + "\n"
	}
	msg += "\nTo lift it: gpucanary unguard " + env
	dialog.ShowInformation("CUDA build kept", msg, win)
}
