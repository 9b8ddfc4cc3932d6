package monitor

import "time"

// TorchChange is when an environment's torch last changed, as the engine
// saw it (or, for a change made while it was stopped, found it on start).
// Metrics and alerts read it: "torch in this environment was replaced an
// hour ago and is still not CUDA".
type TorchChange struct {
	// Changed is the time of the last torch event: installed, changed,
	// replaced or removed.
	Changed time.Time `json:"changed,omitzero"`
	// Replaced is the time of the last CUDA_WHEEL_REPLACED: a CUDA build
	// overwritten by another build.
	Replaced time.Time `json:"replaced,omitzero"`
}
