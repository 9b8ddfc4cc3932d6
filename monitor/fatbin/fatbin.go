// Package fatbin reads which GPU architectures a CUDA library carries,
// straight from its file: the machine code (SASS, one per sm_XY) and the
// PTX (one per compute_XY) in its fat binary, and which CUDA runtime it
// links. A library that has no code for a GPU fails there with "no
// kernel image is available for execution on the device"; this is how
// that is known before anything runs, without the CUDA toolkit
// (cuobjdump), Python or a GPU.
//
// Only headers are read: the ELF or PE headers, then each fat binary
// container's header and its entries' headers, seeking past every
// payload, which is never inflated. A 159 MB library costs well under a
// megabyte of reads. Malformed input is an error, never a panic.
//
// The package imports nothing of GPU Canary's.
package fatbin

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ErrNoFatbin is returned for a well-formed library that has no fat
// binary section: it holds no CUDA kernels (it may still link CUDA).
var ErrNoFatbin = errors.New("no CUDA fat binary in it")

// ErrMalformed wraps what is wrong inside a fat binary section that
// was found: the file is a CUDA library whose kernels cannot be read.
// Other errors are about the file's own headers (not a library, or not
// one this reader can read).
var ErrMalformed = errors.New("malformed CUDA fat binary")

// Arch is one GPU architecture: 8.6, or 9.0 with the suffix "a" (code
// for that exact GPU only, sm_90a) or "f" (for its family, sm_100f).
type Arch struct {
	Major, Minor int
	Suffix       string
}

// ParseArch reads "8.6", "86", "sm_86", "compute_90a", "sm_100f", "120".
func ParseArch(s string) (Arch, bool) {
	s = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "sm_"), "compute_")
	var a Arch
	if n := len(s); n > 0 && (s[n-1] == 'a' || s[n-1] == 'f') {
		a.Suffix, s = s[n-1:], s[:n-1]
	}
	if maj, min, ok := strings.Cut(s, "."); ok {
		x, err1 := strconv.Atoi(maj)
		y, err2 := strconv.Atoi(min)
		if err1 != nil || err2 != nil || x < 1 || y < 0 || y > 9 {
			return Arch{}, false
		}
		a.Major, a.Minor = x, y
		return a, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 10 || n > 9999 {
		return Arch{}, false
	}
	a.Major, a.Minor = n/10, n%10
	return a, true
}

// number is "86", "90a", "120".
func (a Arch) number() string { return fmt.Sprintf("%d%d%s", a.Major, a.Minor, a.Suffix) }

// SM is "sm_86".
func (a Arch) SM() string { return "sm_" + a.number() }

// Compute is "compute_86".
func (a Arch) Compute() string { return "compute_" + a.number() }

// CC is the compute capability "8.6".
func (a Arch) CC() string { return fmt.Sprintf("%d.%d", a.Major, a.Minor) }

func (a Arch) less(b Arch) bool {
	if a.Major != b.Major {
		return a.Major < b.Major
	}
	if a.Minor != b.Minor {
		return a.Minor < b.Minor
	}
	return a.Suffix < b.Suffix
}

// Kernels is what one library carries.
type Kernels struct {
	SASS []Arch // machine code, sorted, each once
	PTX  []Arch // PTX, sorted, each once
	// Runtime is the CUDA runtime library it links ("libcudart.so.13",
	// "cudart64_12.dll"), "" when it links none (a static cudart).
	Runtime string
	// Containers is how many fat binary containers were read.
	Containers int
}

// String is "sm_86 sm_89 sm_120 · PTX 75 80 90", the form `check` prints.
func (k Kernels) String() string {
	var b strings.Builder
	for i, a := range k.SASS {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.SM())
	}
	if len(k.PTX) > 0 {
		if b.Len() > 0 {
			b.WriteString(" · ")
		}
		b.WriteString("PTX")
		for _, a := range k.PTX {
			b.WriteString(" " + a.number())
		}
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// SASSNames are the SASS as sm_XY names.
func (k Kernels) SASSNames() []string {
	out := make([]string, len(k.SASS))
	for i, a := range k.SASS {
		out[i] = a.SM()
	}
	return out
}

// PTXNames are the PTX as compute_XY names.
func (k Kernels) PTXNames() []string {
	out := make([]string, len(k.PTX))
	for i, a := range k.PTX {
		out[i] = a.Compute()
	}
	return out
}

// Support is whether a library runs on one GPU.
type Support int

const (
	// Missing: neither SASS nor PTX the GPU can use.
	Missing Support = iota
	// JIT: no SASS for the GPU, but PTX at or below its compute
	// capability, which the driver compiles on first use.
	JIT
	// Runs: SASS the GPU runs.
	Runs
)

// Judge says whether the kernels run on a GPU of compute capability
// gpu, and by which arch: SASS of the same major with a minor at or
// below the GPU's runs (8.6 code on an 8.9 GPU), the newest such being
// the one loaded; sm_XYa only on exactly X.Y; else PTX at or below the
// GPU's compute capability, the newest, compiled just in time
// (compute_XYa only on X.Y, compute_XYf only within major X).
func (k Kernels) Judge(gpu Arch) (Support, Arch) {
	var best Arch
	found := false
	for _, s := range k.SASS {
		ok := s.Major == gpu.Major && s.Minor <= gpu.Minor
		if s.Suffix == "a" {
			ok = s.Major == gpu.Major && s.Minor == gpu.Minor
		}
		if ok && (!found || best.less(s)) {
			best, found = s, true
		}
	}
	if found {
		return Runs, best
	}
	for _, p := range k.PTX {
		ok := p.Major < gpu.Major || (p.Major == gpu.Major && p.Minor <= gpu.Minor)
		switch p.Suffix {
		case "a":
			ok = p.Major == gpu.Major && p.Minor == gpu.Minor
		case "f":
			ok = p.Major == gpu.Major && p.Minor <= gpu.Minor
		}
		if ok && (!found || best.less(p)) {
			best, found = p, true
		}
	}
	if found {
		return JIT, best
	}
	return Missing, Arch{}
}

// Read reads a library's kernels from r, size bytes long: an ELF shared
// object (section .nv_fatbin) or a PE DLL (section .nv_fatb). A library
// without the section is ErrNoFatbin.
func Read(r io.ReaderAt, size int64) (Kernels, error) {
	var magic [4]byte
	if _, err := r.ReadAt(magic[:], 0); err != nil {
		return Kernels{}, fmt.Errorf("reading the file's magic number: %w", err)
	}
	switch {
	case string(magic[:]) == "\x7fELF":
		return readELF(r, size)
	case magic[0] == 'M' && magic[1] == 'Z':
		return readPE(r, size)
	}
	return Kernels{}, errors.New("neither an ELF nor a PE file")
}

// set collects archs once each.
type set map[Arch]bool

func (s set) sorted() []Arch {
	out := make([]Arch, 0, len(s))
	for a := range s {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b Arch) int {
		switch {
		case a.less(b):
			return -1
		case b.less(a):
			return 1
		}
		return 0
	})
	return out
}
