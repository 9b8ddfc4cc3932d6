package kbrefresh

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/kb"
)

// bounds are how far beyond the embedded facts an index may teach. An
// index (a mirror, a proxy, a page someone swapped) can list any file
// name; a release taught from it shows as newest and is offered as a
// repair, so a version no release pattern allows (torch 2.49.6, cu139)
// is dropped rather than learned. The margins are generous for what can
// really appear between two GPU Canary releases, and tight against what
// cannot.
var bounds = struct {
	// TorchMinorMargin: torch ships a minor release about every three
	// months (2.0 in March 2023 to 2.15 in 2026); four is a year of
	// releases beyond the newest in the tables.
	TorchMinorMargin int
	// NewMajorMinors: a new major (torch 3) starts at .0; its first two
	// minors are allowed.
	NewMajorMinors int
	// MaxPatch: no torch minor has had more than three patch releases
	// (1.13.1, 2.1.2, 2.5.1, 2.7.1, ...); nine leaves room.
	MaxPatch int
	// CUDAMajors: the CUDA majors of download.pytorch.org's tags since
	// torch 1.13 are 11, 12 and 13; a tag of another major is not one.
	CUDAMajors [2]int
	// CUDAMinorMargin: NVIDIA ships a CUDA minor every few months and
	// torch adds a tag for a few a year; within the newest major known,
	// two minors beyond the newest tag known. An older major's minors go
	// to 9 (11.8 and 12.9 ended theirs).
	CUDAMinorMargin int
}{TorchMinorMargin: 4, NewMajorMinors: 2, MaxPatch: 9, CUDAMajors: [2]int{11, 13}, CUDAMinorMargin: 2}

// known is what the facts in force say is newest, for the bounds.
type known struct {
	lastMinor  map[int]int // torch major -> its newest minor
	newestMaj  int
	cudaMajor  int // the newest CUDA tag's
	cudaMinor  int
	cudaByMaj  map[int]int
	torchFacts string // for messages: "2.15"
}

func knownFacts() known {
	k := known{lastMinor: map[int]int{}, cudaByMaj: map[int]int{}}
	for _, r := range kb.Releases() {
		maj, min, ok := majorMinor(r.Minor)
		if !ok {
			continue
		}
		if m, seen := k.lastMinor[maj]; !seen || min > m {
			k.lastMinor[maj] = min
		}
		if maj > k.newestMaj || maj == k.newestMaj && min >= k.lastMinor[maj] {
			k.newestMaj, k.torchFacts = maj, r.Minor
		}
		for _, tag := range r.Tags {
			cmaj, cmin, ok := cudaTag(tag)
			if !ok {
				continue
			}
			if cmaj > k.cudaMajor || cmaj == k.cudaMajor && cmin > k.cudaMinor {
				k.cudaMajor, k.cudaMinor = cmaj, cmin
			}
		}
	}
	return k
}

// plausible says why version (as a wheel's file name has it:
// "2.16.0+cu132") is not one a release pattern allows, or "" when it is.
func (k known) plausible(version string) string {
	base, local, _ := strings.Cut(version, "+")
	maj, min, ok := majorMinor(base)
	if !ok {
		return "not a torch version"
	}
	if parts := strings.SplitN(base, ".", 4); len(parts) >= 3 {
		if p, err := strconv.Atoi(leadingDigits(parts[2])); err != nil || p > bounds.MaxPatch {
			return fmt.Sprintf("no torch minor has a patch release %s (at most %d)", parts[2], bounds.MaxPatch)
		}
	}
	last, seen := k.lastMinor[maj]
	switch {
	case maj == k.newestMaj+1 && min < bounds.NewMajorMinors:
	case !seen:
		return fmt.Sprintf("torch %d.x is no release GPU Canary knows or expects (the newest known is %s)", maj, k.torchFacts)
	case maj == k.newestMaj && min > last+bounds.TorchMinorMargin:
		return fmt.Sprintf("torch %d.%d is more than %d minor releases beyond the newest known, %s", maj, min, bounds.TorchMinorMargin, k.torchFacts)
	case maj < k.newestMaj && min > last:
		return fmt.Sprintf("torch %d.x ended at %d.%d", maj, maj, last)
	}
	if !strings.HasPrefix(local, "cu") {
		return ""
	}
	cmaj, cmin, ok := cudaTag(local)
	switch {
	case !ok:
		return "its CUDA tag " + local + " is not one"
	case cmaj < bounds.CUDAMajors[0] || cmaj > bounds.CUDAMajors[1]:
		return fmt.Sprintf("its CUDA tag %s is of CUDA %d, and torch's tags are of CUDA %d to %d", local, cmaj, bounds.CUDAMajors[0], bounds.CUDAMajors[1])
	case cmaj == k.cudaMajor && cmin > k.cudaMinor+bounds.CUDAMinorMargin:
		return fmt.Sprintf("its CUDA tag %s is more than %d minors beyond the newest known, cu%d%d", local, bounds.CUDAMinorMargin, k.cudaMajor, k.cudaMinor)
	case cmaj > k.cudaMajor && cmin > bounds.CUDAMinorMargin:
		return fmt.Sprintf("its CUDA tag %s is past the start of a CUDA major not yet known", local)
	}
	return ""
}

// majorMinor reads "2.16" or "2.16.0rc1" as 2, 16.
func majorMinor(v string) (int, int, bool) {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	maj, err1 := strconv.Atoi(parts[0])
	min, err2 := strconv.Atoi(leadingDigits(parts[1]))
	return maj, min, err1 == nil && err2 == nil && maj >= 0 && min >= 0
}

// cudaTag reads "cu132" as 13, 2 (kb.CUDAForTag's form: the last digit is
// the minor).
func cudaTag(tag string) (int, int, bool) {
	cuda, ok := kb.CUDAForTag(tag)
	if !ok {
		return 0, 0, false
	}
	return majorMinor(cuda)
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}
