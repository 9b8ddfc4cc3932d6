//go:build !windows

package gpu

import "os"

// nvidiaDriverPresent reports whether an NVIDIA kernel driver is loaded.
func nvidiaDriverPresent() bool {
	_, err := os.Stat("/dev/nvidiactl")
	return err == nil
}
