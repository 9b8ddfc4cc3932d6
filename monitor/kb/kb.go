// Package kb holds GPU Canary's facts about torch releases, their CUDA
// variants and companions, CUDA driver floors and GPU architectures, as
// embedded data with the source of every row (data/releases.json), and the
// queries the rules and the repair planner ask of them.
//
// When a machine disagrees with a table (a newer torch, a new GPU) the
// reading from disk or NVML wins: unknown versions answer SupportUnknown or
// ok=false, which the rules turn into advice, never into a wrong error.
package kb

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	pep440 "github.com/aquasecurity/go-pep440-version"
)

//go:embed data/releases.json
var releasesJSON []byte

// Support is a tri-state answer: the tables may not know.
type Support int

const (
	SupportUnknown Support = iota
	SupportYes
	SupportNo
)

func (s Support) String() string {
	return [...]string{"unknown", "yes", "no"}[s]
}

type archSet struct {
	SASS       []string `json:"sass"`
	PTX        []string `json:"ptx"`
	Unverified bool     `json:"unverified"`
}

type release struct {
	Minor          string             `json:"minor"`
	Patches        []string           `json:"patches"`
	CUDA           []string           `json:"cuda"`
	PyPILinuxCUDA  string             `json:"pypi_linux_cuda"`
	PyPIUnverified bool               `json:"pypi_unverified"`
	Vision         map[string]string  `json:"vision"`
	Audio          map[string]string  `json:"audio"`
	Arches         map[string]archSet `json:"arches"`
	Source         string             `json:"source"`
}

type driverRow struct {
	CUDA              string `json:"cuda"`
	LinuxMinor        string `json:"linux_minor"`
	WindowsMinor      string `json:"windows_minor"`
	LinuxFull         string `json:"linux_full"`
	WindowsFull       string `json:"windows_full"`
	WindowsUnverified bool   `json:"windows_unverified"`
	Source            string `json:"source"`
}

type archRow struct {
	Major  string   `json:"major"`
	Name   string   `json:"name"`
	CCs    []string `json:"ccs"`
	Source string   `json:"source"`
}

type tables struct {
	Releases      []release   `json:"releases"`
	Drivers       []driverRow `json:"drivers"`
	Architectures []archRow   `json:"architectures"`
}

var (
	loadOnce sync.Once
	facts    tables
	byMinor  map[string]*release
)

// data parses the embedded tables once. Bad embedded data is a build
// defect, caught by TestEmbeddedData, so it panics.
func data() *tables {
	loadOnce.Do(func() {
		if err := json.Unmarshal(releasesJSON, &facts); err != nil {
			panic(fmt.Sprintf("kb: embedded data/releases.json: %v", err))
		}
		byMinor = map[string]*release{}
		for i := range facts.Releases {
			byMinor[facts.Releases[i].Minor] = &facts.Releases[i]
		}
	})
	return &facts
}

// parsed is a torch version reduced to what the tables are keyed by.
type parsed struct {
	minor string // "2.5"
	patch string // "2.5.1" (the release, without pre/dev/local parts)
}

func parseTorch(v string) (parsed, bool) {
	pv, err := pep440.Parse(strings.TrimSpace(v))
	if err != nil {
		return parsed{}, false
	}
	parts := strings.Split(pv.BaseVersion(), ".")
	if len(parts) < 2 {
		return parsed{}, false
	}
	for len(parts) < 3 {
		parts = append(parts, "0")
	}
	return parsed{minor: parts[0] + "." + parts[1], patch: strings.Join(parts[:3], ".")}, true
}

func releaseOf(torchVersion string) (*release, parsed, bool) {
	data()
	p, ok := parseTorch(torchVersion)
	if !ok {
		return nil, p, false
	}
	r, ok := byMinor[p.minor]
	return r, p, ok
}

// Known reports whether a torch version's release is in the table.
func Known(torchVersion string) bool {
	_, _, ok := releaseOf(torchVersion)
	return ok
}

// TagForCUDA is the index tag of a CUDA version: "12.1" -> "cu121".
func TagForCUDA(cuda string) string {
	maj, min, ok := cudaParts(cuda)
	if !ok {
		return ""
	}
	return fmt.Sprintf("cu%d%d", maj, min)
}

// CUDAForTag is the CUDA version of an index tag: "cu121" -> "12.1".
func CUDAForTag(tag string) (string, bool) {
	if !strings.HasPrefix(tag, "cu") || len(tag) < 5 {
		return "", false
	}
	d := tag[2:]
	if _, err := strconv.Atoi(d); err != nil {
		return "", false
	}
	return d[:len(d)-1] + "." + d[len(d)-1:], true
}

// cudaParts splits "12.4" (or "12.4.1") into 12 and 4.
func cudaParts(v string) (major, minor int, ok bool) {
	parts := strings.Split(strings.TrimSpace(v), ".")
	if len(parts) < 2 {
		return 0, 0, false
	}
	a, err1 := strconv.Atoi(parts[0])
	b, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || a < 0 || b < 0 || b > 9 {
		return 0, 0, false
	}
	return a, b, true
}

// compareCUDA orders two CUDA versions; ok is false if either is unreadable.
func compareCUDA(a, b string) (int, bool) {
	am, an, ok1 := cudaParts(a)
	bm, bn, ok2 := cudaParts(b)
	if !ok1 || !ok2 {
		return 0, false
	}
	switch {
	case am != bm:
		return am - bm, true
	default:
		return an - bn, true
	}
}

// CUDAFromDriverVersion turns NVML's SystemGetCudaDriverVersion integer
// (1000*major + 10*minor, 12090) into "12.9".
func CUDAFromDriverVersion(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}

// Variants lists the CUDA index tags of a torch release, oldest CUDA first.
func Variants(torchVersion string) ([]string, bool) {
	r, _, ok := releaseOf(torchVersion)
	if !ok {
		return nil, false
	}
	return append([]string(nil), r.CUDA...), true
}

// Companions is the torchvision and torchaudio that pair with a torch
// version, from the table where it names them, else from the rules
// (torchvision 0.(minor+15).patch; torchaudio = torch from 2.1 on).
func Companions(torchVersion string) (vision, audio string, ok bool) {
	r, p, ok := releaseOf(torchVersion)
	if !ok {
		return "", "", false
	}
	if v, ok := r.Vision[p.patch]; ok {
		vision = v
	} else {
		parts := strings.Split(p.patch, ".")
		minor, _ := strconv.Atoi(parts[1])
		vision = fmt.Sprintf("0.%d.%s", minor+15, parts[2])
	}
	if a, ok := r.Audio[p.patch]; ok {
		audio = a
	} else {
		audio = p.patch
	}
	return vision, audio, true
}

// DefaultCUDA is the CUDA of the plain PyPI wheel of a torch version on a
// platform ("linux" or "windows"); Windows PyPI wheels are CPU-only (""
// with ok=true).
func DefaultCUDA(torchVersion, platform string) (string, bool) {
	r, _, ok := releaseOf(torchVersion)
	if !ok {
		return "", false
	}
	if platform == "windows" {
		return "", true
	}
	return r.PyPILinuxCUDA, true
}

// DriverFloor is the least driver for a CUDA version on one platform.
type DriverFloor struct {
	CUDA string
	// MinorCompat is the floor for minor-version compatibility (any 12.x
	// build runs, PTX JIT aside); Full the floor for every feature.
	MinorCompat, Full string
	Source            string
}

// DriverFloorFor looks up the floors of a CUDA version on a platform.
func DriverFloorFor(cuda, platform string) (DriverFloor, bool) {
	for _, d := range data().Drivers {
		if c, ok := compareCUDA(d.CUDA, cuda); ok && c == 0 {
			if platform == "windows" {
				return DriverFloor{CUDA: d.CUDA, MinorCompat: d.WindowsMinor, Full: d.WindowsFull, Source: d.Source}, true
			}
			return DriverFloor{CUDA: d.CUDA, MinorCompat: d.LinuxMinor, Full: d.LinuxFull, Source: d.Source}, true
		}
	}
	return DriverFloor{}, false
}

// DriverVerdict says whether a build runs on a driver.
type DriverVerdict struct {
	Support Support
	// MinorCompat is true when it runs only through CUDA minor-version
	// compatibility (the driver is older than the build within one major).
	MinorCompat bool
	Reason      string
}

// DriverRuns says whether a torch built for buildCUDA runs with a driver
// whose CUDA version (NVML's, "12.4") is driverCUDA.
func DriverRuns(buildCUDA, driverCUDA string) DriverVerdict {
	c, ok := compareCUDA(driverCUDA, buildCUDA)
	if !ok {
		return DriverVerdict{Reason: "the CUDA versions cannot be compared"}
	}
	bm, _, _ := cudaParts(buildCUDA)
	dm, _, _ := cudaParts(driverCUDA)
	switch {
	case c >= 0:
		return DriverVerdict{Support: SupportYes, Reason: fmt.Sprintf("the driver supports CUDA %s, at least the build's %s", driverCUDA, buildCUDA)}
	case dm == bm && bm >= 11:
		return DriverVerdict{Support: SupportYes, MinorCompat: true,
			Reason: fmt.Sprintf("a driver for CUDA %s runs CUDA %d.x builds through minor-version compatibility; a driver supporting CUDA %s gives every feature", driverCUDA, bm, buildCUDA)}
	default:
		floor := ""
		if f, ok := DriverFloorFor(buildCUDA, "linux"); ok {
			floor = fmt.Sprintf(" (Linux driver %s or newer)", f.MinorCompat)
		}
		return DriverVerdict{Support: SupportNo,
			Reason: fmt.Sprintf("CUDA %d builds need a driver for CUDA %d.x%s; this one supports CUDA %s", bm, bm, floor, driverCUDA)}
	}
}

// Architecture names the GPU architecture of a compute capability.
func Architecture(cc string) (string, bool) {
	for _, a := range data().Architectures {
		for _, c := range a.CCs {
			if c == cc {
				return a.Name, true
			}
		}
	}
	return "", false
}

// ArchList is the code an official wheel carries: SASS for these compute
// capabilities, and PTX that newer GPUs can compile just in time.
type ArchList struct {
	SASS, PTX  []string
	Source     string
	Unverified bool
}

// ArchListFor returns the arch list of the official Linux wheel of a torch
// version and variant tag ("cu128").
func ArchListFor(torchVersion, tag string) (ArchList, bool) {
	r, _, ok := releaseOf(torchVersion)
	if !ok {
		return ArchList{}, false
	}
	a, ok := r.Arches[tag]
	if !ok {
		return ArchList{}, false
	}
	return ArchList{SASS: a.SASS, PTX: a.PTX, Source: r.Source, Unverified: a.Unverified}, true
}

// ArchVerdict says whether a build has code for a GPU.
type ArchVerdict struct {
	Support Support
	ViaPTX  bool
	Reason  string
}

// BuildRunsOnGPU says whether the official build (torchVersion, tag) has
// code for compute capability cc: SASS of the same major with a minor at
// or below cc's (8.6 code runs on 8.9), or PTX at or below cc to compile
// just in time.
func BuildRunsOnGPU(torchVersion, tag, cc string) ArchVerdict {
	list, ok := ArchListFor(torchVersion, tag)
	if !ok {
		return ArchVerdict{Reason: fmt.Sprintf("the architectures of torch %s %s are not in GPU Canary's table", torchVersion, tag)}
	}
	gm, gn, ok := cudaParts(cc)
	if !ok {
		return ArchVerdict{Reason: fmt.Sprintf("compute capability %q cannot be read", cc)}
	}
	for _, s := range list.SASS {
		if sm, sn, ok := cudaParts(s); ok && sm == gm && sn <= gn {
			return ArchVerdict{Support: SupportYes, Reason: fmt.Sprintf("the build has sm_%d%d code, which runs on sm_%d%d", sm, sn, gm, gn)}
		}
	}
	for _, s := range list.PTX {
		if c, ok := compareCUDA(s, cc); ok && c <= 0 {
			return ArchVerdict{Support: SupportYes, ViaPTX: true, Reason: fmt.Sprintf("the build has compute_%s PTX, compiled just in time for sm_%d%d", strings.ReplaceAll(s, ".", ""), gm, gn)}
		}
	}
	return ArchVerdict{Support: SupportNo,
		Reason: fmt.Sprintf("torch %s %s is built for sm %s only", torchVersion, tag, strings.Join(list.SASS, ", "))}
}

// Choice is a torch build to install, with why.
type Choice struct {
	Torch, Tag, CUDA, Vision, Audio string
	Reason                          string
}

// ChooseVariant picks the newest CUDA variant of torchVersion whose full
// driver floor the driver meets (variant CUDA <= driverCUDA) and whose
// arch list covers cc. An empty cc skips the arch check; an unknown arch
// list is allowed and said so.
func ChooseVariant(torchVersion, driverCUDA, cc string) (Choice, bool) {
	r, p, ok := releaseOf(torchVersion)
	if !ok {
		return Choice{Reason: fmt.Sprintf("torch %s is not in GPU Canary's release table", torchVersion)}, false
	}
	var excluded []string
	for i := len(r.CUDA) - 1; i >= 0; i-- {
		tag := r.CUDA[i]
		cuda, _ := CUDAForTag(tag)
		if driverCUDA != "" {
			if c, ok := compareCUDA(cuda, driverCUDA); ok && c > 0 {
				excluded = append(excluded, fmt.Sprintf("%s needs a driver with CUDA %s; this driver supports %s", tag, cuda, driverCUDA))
				continue
			}
		}
		note := ""
		if cc != "" {
			v := BuildRunsOnGPU(p.patch, tag, cc)
			switch v.Support {
			case SupportNo:
				excluded = append(excluded, fmt.Sprintf("%s has no code for sm_%s", tag, strings.ReplaceAll(cc, ".", "")))
				continue
			case SupportUnknown:
				note = fmt.Sprintf("; its GPU architectures are not in the table, so sm_%s is not checked", strings.ReplaceAll(cc, ".", ""))
			}
		}
		vision, audio, _ := Companions(p.patch)
		why := fmt.Sprintf("%s is the newest CUDA variant of torch %s that this driver and GPU can run%s", tag, p.patch, note)
		if len(excluded) > 0 {
			why += " (" + strings.Join(excluded, "; ") + ")"
		}
		return Choice{Torch: p.patch, Tag: tag, CUDA: cuda, Vision: vision, Audio: audio, Reason: why}, true
	}
	return Choice{Reason: fmt.Sprintf("no CUDA variant of torch %s runs here: %s", p.patch, strings.Join(excluded, "; "))}, false
}

// OldestReleaseFor finds the oldest torch release with a variant that runs
// on this driver and GPU, at its newest patch: what to propose when the
// installed torch has none (a Blackwell GPU with torch 2.5).
func OldestReleaseFor(driverCUDA, cc string) (Choice, bool) {
	for _, r := range data().Releases {
		newest := r.Patches[len(r.Patches)-1]
		if c, ok := ChooseVariant(newest, driverCUDA, cc); ok {
			if cc != "" && BuildRunsOnGPU(newest, c.Tag, cc).Support != SupportYes {
				continue // only a release known to have code for this GPU
			}
			return c, true
		}
	}
	return Choice{Reason: "no torch release in GPU Canary's table runs on this driver and GPU"}, false
}
