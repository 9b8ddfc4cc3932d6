// This file holds the null backend: the "no NVIDIA driver" state.

package gpu

import "context"

// nullBackend is the "no NVIDIA driver" state: NVML could not be loaded or
// initialised, and nothing else is ever asked of it.
type nullBackend struct{ reason string }

var _ Backend = nullBackend{}

// Snapshot reports no driver and says why.
func (n nullBackend) Snapshot(context.Context) State {
	return State{Source: "none", Devices: []Device{}, Error: n.reason}
}

// Close has nothing to release.
func (nullBackend) Close() error { return nil }
