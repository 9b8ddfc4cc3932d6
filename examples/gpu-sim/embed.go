// Package gpusim holds the example GPU scenarios (README.md beside it
// says what each shows), embedded so that `gpucanary demo` runs on the
// same file a person reads here.
package gpusim

import _ "embed"

// TwoGPUs is two-gpus.json: the demo's scenario.
//
//go:embed two-gpus.json
var TwoGPUs []byte
