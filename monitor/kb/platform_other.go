//go:build !windows

package kb

// hostPlatform is the platform whose driver floors judge this machine's
// driver: NVIDIA's drivers for Linux and the other Unix systems share one
// numbering (data/drivers.json's linux_* columns).
const hostPlatform = "linux"
