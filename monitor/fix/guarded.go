package fix

import (
	"context"
	"fmt"

	"github.com/gpucanary/gpucanary/monitor/fixjournal"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
)

// Guards is what a repair needs of `gpucanary guard` (monitor/guard,
// wired in by cmd): a guard pins the installed torch, so the install of
// another build would fail under it.
type Guards interface {
	// Guarded reports whether env is guarded, its files whole.
	Guarded(env string) bool
	// Lift takes the guard off env, its files restored.
	Lift(env string) error
	// Set puts it on again, for the torch installed now.
	Set(env string) error
}

// Run carries out p (see run): on a guarded environment it lifts the
// guard first and sets it again afterwards, whatever the install did, so
// the guard then holds the torch the repair left. A guard that cannot be
// set again (the install left no CUDA torch) is said through line; the
// repair's own result stands.
func (s Service) Run(ctx context.Context, p fixplan.Plan, line func(string)) (fixjournal.Result, error) {
	if s.Guards == nil || !s.Guards.Guarded(p.Env) {
		return s.run(ctx, p, line)
	}
	if err := s.Guards.Lift(p.Env); err != nil {
		return fixjournal.Result{}, fmt.Errorf("lifting the guard on %s before the install: %w", p.Env, err)
	}
	line("GPU Canary lifted the guard on " + p.Env + " for this install.")
	res, err := s.run(ctx, p, line)
	if serr := s.Guards.Set(p.Env); serr != nil {
		line(fmt.Sprintf("GPU Canary could not set the guard again: %v", serr))
	} else {
		line("GPU Canary set the guard again, for the torch installed now.")
	}
	return res, err
}
