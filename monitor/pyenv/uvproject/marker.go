package uvproject

import "github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"

// tri is a three-valued truth: a marker that tests something other than
// the platform (python_version, an extra) may or may not hold.
type tri int8

const (
	no tri = iota
	maybe
	yes
)

// platformEnv holds the PEP 508 marker variables that a platform fixes.
// Source: PEP 508 "Environment Markers" (sys.platform, platform.system(),
// os.name). platform_machine is left open: CUDA torch runs on x86_64 and
// aarch64 alike.
var platformEnv = map[string]pyspec.Env{
	"linux":   {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"},
	"windows": {"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt"},
}

// markerOn tells whether a PEP 508 marker can hold on platform ("linux"
// or "windows"). An empty marker holds everywhere; one that cannot be
// parsed may hold (the check errs towards warning).
func markerOn(marker, platform string) tri {
	holds, known := pyspec.Eval(marker, platformEnv[platform])
	switch {
	case !known:
		return maybe
	case holds:
		return yes
	}
	return no
}
