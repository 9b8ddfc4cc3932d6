package kb

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"
)

// torchVersion is a torch version reduced to what the tables are keyed by.
type torchVersion struct {
	minor string // "2.5"
	patch string // "2.5.1": the release, without pre, dev or local parts
}

// parseTorch reads any PEP 440 torch version ("2.5.1+cu121", "2.5.0a0+git1234",
// "2.10.0.dev20251001+cu128"); the local tag and pre/dev parts are dropped.
func parseTorch(v string) (torchVersion, bool) {
	pv, err := pyspec.VersionOf(strings.TrimSpace(v))
	if err != nil {
		return torchVersion{}, false
	}
	base := pv.Base
	if strings.Contains(base, "!") { // an epoch: no torch release has one
		return torchVersion{}, false
	}
	parts := strings.Split(base, ".")
	if len(parts) < 2 {
		return torchVersion{}, false
	}
	for len(parts) < 3 {
		parts = append(parts, "0")
	}
	return torchVersion{minor: parts[0] + "." + parts[1], patch: strings.Join(parts[:3], ".")}, true
}

// compareTorch orders two torch versions that parseTorch accepts.
func compareTorch(a, b string) int {
	c, err := pyspec.CompareVersions(a, b)
	if err != nil {
		return strings.Compare(a, b)
	}
	return c
}

// cudaParts splits a CUDA version or compute capability ("12.4", "12.4.1",
// "8.6") into major and minor. Minors are one digit, as in index tags.
func cudaParts(v string) (major, minor int, ok bool) {
	parts := strings.Split(strings.TrimSpace(v), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, 0, false
	}
	a, err1 := strconv.Atoi(parts[0])
	b, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || a <= 0 || a > 99 || b < 0 || b > 9 || parts[0][0] == '+' || parts[1][0] == '+' {
		return 0, 0, false
	}
	return a, b, true
}

// compareCUDA orders two CUDA versions (or compute capabilities); ok is
// false when either cannot be read.
func compareCUDA(a, b string) (int, bool) {
	am, an, ok1 := cudaParts(a)
	bm, bn, ok2 := cudaParts(b)
	if !ok1 || !ok2 {
		return 0, false
	}
	if am != bm {
		return am - bm, true
	}
	return an - bn, true
}

// TagForCUDA is the download.pytorch.org index tag of a CUDA version, so a
// version read from torch/version.py can name its index: "12.1" -> "cu121".
// It is "" for anything that is not a CUDA version.
func TagForCUDA(cuda string) string {
	maj, min, ok := cudaParts(cuda)
	if !ok {
		return ""
	}
	return fmt.Sprintf("cu%d%d", maj, min)
}

// CUDAForTag is the CUDA version of an index tag, so a --variant flag or a
// local version tag can be compared with a driver: "cu121" -> "12.1".
// "cpu", "rocm6.2", "xpu" and malformed tags give "", false.
func CUDAForTag(tag string) (string, bool) {
	d, found := strings.CutPrefix(tag, "cu")
	if !found || len(d) < 2 || len(d) > 3 || d[0] == '0' {
		return "", false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return d[:len(d)-1] + "." + d[len(d)-1:], true
}

// smName writes a compute capability as torch and nvcc do: "8.6" -> "sm_86".
func smName(cc string) string {
	return "sm_" + strings.ReplaceAll(strings.TrimSpace(cc), ".", "")
}

// ReleaseVersion is the release a torch version belongs to, the version
// download.pytorch.org's stable indexes publish: "1.13.0a0+gitunknown"
// (Debian's) -> "1.13.0", "2.6.0a0+ecf3bae40a.nv25.01" (NVIDIA's) ->
// "2.6.0", "2.10.0.dev20251001+cu128" -> "2.10.0", "2.5.1+cu121" ->
// "2.5.1". It is "" for a version that cannot be read.
func ReleaseVersion(v string) string {
	tv, ok := parseTorch(v)
	if !ok {
		return ""
	}
	return tv.patch
}

// PublicVersion drops the local tag ("2.5.1+cu121" -> "2.5.1"): indexes and
// the tables are keyed by the public version. A version PEP 440 cannot read
// loses whatever follows its first "+".
func PublicVersion(v string) string {
	pv, err := pyspec.VersionOf(v)
	if err != nil {
		if i := strings.IndexByte(v, '+'); i >= 0 {
			return v[:i]
		}
		return v
	}
	return pv.Public
}
