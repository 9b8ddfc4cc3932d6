package kb

import (
	"context"
	"slices"

	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// Annotate fills in what kb knows about each device (its architecture),
// on a copy of g's devices, and the CUDA version derived from the
// driver's version when the driver did not give its own. Every reading of
// the GPU goes through it (Annotated), so every command and view
// describes the same GPU the same way.
func Annotate(g gpu.State) gpu.State {
	if m := MachineOf(g); m.DriverCUDAFrom != "" {
		g.CUDADriverDerived = m.DriverCUDA
	}
	g.Devices = slices.Clone(g.Devices)
	for i := range g.Devices {
		if a, ok := Architecture(g.Devices[i].ComputeCapability); ok {
			g.Devices[i].Architecture = a
		}
	}
	return g
}

// Annotated wraps a GPU backend so that each snapshot it reads is
// Annotate'd where it is read: the engine, check, ps, report and the
// agent all hold the backend this returns. A nil backend stays nil.
func Annotated(b gpu.Backend) gpu.Backend {
	if b == nil {
		return nil
	}
	if _, ok := b.(annotated); ok {
		return b
	}
	return annotated{b}
}

// annotated is the Backend Annotated returns.
type annotated struct{ gpu.Backend }

// Snapshot reads the wrapped backend and annotates its answer.
func (a annotated) Snapshot(ctx context.Context) gpu.State {
	return Annotate(a.Backend.Snapshot(ctx))
}
