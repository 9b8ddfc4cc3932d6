package config

import (
	"fmt"
	"slices"
	"strings"
)

// NotifyKinds are the event kinds `notify` may name: those the engine's
// notification policy can tell (engine's notifies, which a test keeps
// equal to this list). The settings file is read before the engine runs
// and below it, so the names are kept here as the settings spell them.
var NotifyKinds = []string{
	"CUDA_WHEEL_REPLACED",
	"TORCH_CHANGED",
	"TORCH_REMOVED",
	"JOB_ON_CPU",
	"JOB_ON_CPU_CLEARED",
	"FINDING_RAISED",
	"FINDING_CLEARED",
	"GPU_STATE_CHANGED",
	// The GPU health codes: their findings' raise and clear notify while
	// the code is allowed (issue 44).
	"GPU_THROTTLED",
	"GPU_LOST",
	"GPU_XID",
	"PCIE_DEGRADED",
	"GPU_MEMORY_ERRORS",
	"VRAM_SPILL",
	"DRIVER_RESET",
	"JOB_ENDED",
	// A job stalled or spinning on its GPU (issue 44): as the GPU
	// health codes, its finding's raise and clear.
	"JOB_STALLED",
	"JOB_SPINNING",
}

// NotifyNone, as `notify = ["NONE"]`, turns every notification off: an
// empty list means every kind, so Settings writes this when every kind
// is unticked.
const NotifyNone = "NONE"

// checkNotify refuses a name in notify that is no kind the policy can
// tell. Any non-empty list limits notifications to the kinds it names,
// so a typo ("cuda_wheel_replaced", "CUDA_WHEEL_REPLACE") would silence
// every notification without a word. Names are matched exactly, as
// `watch --json` prints them and scripts compare them; one that differs
// only in case is refused too, with its spelling.
func checkNotify(names []string) error {
	for _, n := range names {
		if n == NotifyNone || slices.Contains(NotifyKinds, n) {
			continue
		}
		hint := ""
		for _, k := range append(slices.Clone(NotifyKinds), NotifyNone) {
			if strings.EqualFold(strings.TrimSpace(n), k) {
				hint = fmt.Sprintf(" (kinds are written in capitals: %s)", k)
			}
		}
		return fmt.Errorf("notify %q is not a kind of event GPU Canary notifies about%s; the kinds are %s, or %s alone for no notifications",
			n, hint, strings.Join(NotifyKinds, ", "), NotifyNone)
	}
	return nil
}
