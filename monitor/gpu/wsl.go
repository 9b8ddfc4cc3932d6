// This file tells WSL2 apart: there the GPU is the Windows host's, reached
// through /dev/dxg, NVML is the host driver's copy under /usr/lib/wsl/lib
// (not the distribution's libnvidia-ml.so.1), and the driver runs in WDDM
// mode, so NVML lists no process and no process's memory.

package gpu

import (
	"bytes"
	"os"
	"path/filepath"
)

// WSLLibDir is where WSL2 mounts the Windows driver's Linux libraries,
// NVML among them.
const WSLLibDir = "/usr/lib/wsl/lib"

// WSLNote says why the process view is thinner under WSL2; the views
// show it beside "(WSL)".
const WSLNote = "under WSL2 the Windows driver (WDDM) owns the GPU: NVML lists no processes and no memory per process, so a process's GPU use is read from /dev/dxg and the CUDA libraries it has open, and its memory is not known"

// WSLProbe is where DetectWSL looks; the zero value is this machine.
type WSLProbe struct {
	// Root is prefixed to /proc/version, /dev/dxg and WSLLibDir ("" = /).
	Root string
	// Getenv reads WSL_DISTRO_NAME; nil is os.Getenv.
	Getenv func(string) string
}

// DetectWSL reports whether this Linux runs under WSL2, and says by which
// sign: WSL_DISTRO_NAME in the environment (set by wsl.exe, lost under
// sudo or a service), a kernel built by Microsoft (/proc/version says
// "microsoft"), or the paravirtualized GPU device /dev/dxg. "" when none.
func DetectWSL(p WSLProbe) string {
	getenv := p.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if getenv("WSL_DISTRO_NAME") != "" {
		return "WSL_DISTRO_NAME is set"
	}
	if b, err := os.ReadFile(filepath.Join(p.root(), "proc", "version")); err == nil &&
		bytes.Contains(bytes.ToLower(b), []byte("microsoft")) {
		return "/proc/version names a Microsoft kernel"
	}
	if _, err := os.Stat(filepath.Join(p.root(), "dev", "dxg")); err == nil {
		return "/dev/dxg exists"
	}
	return ""
}

// WSLLibrary is the NVML to load under WSL2, WSLLibDir's
// libnvidia-ml.so.1, or "" when it is not there (no GPU passed to WSL, an
// old Windows driver): then the usual search for the library runs.
func WSLLibrary(p WSLProbe) string {
	lib := filepath.Join(p.root(), WSLLibDir, "libnvidia-ml.so.1")
	if _, err := os.Stat(lib); err != nil {
		return ""
	}
	return lib
}

func (p WSLProbe) root() string {
	if p.Root == "" {
		return "/"
	}
	return p.Root
}
