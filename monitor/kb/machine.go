package kb

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// GPU is one GPU as the rules judge it.
type GPU struct {
	Name string
	// CC is the compute capability ("8.0"); "" when neither the driver nor
	// the product name says it.
	CC     string
	Asleep bool
	// CCFromName is true when the driver did not give CC (an asleep GPU
	// is not asked, so that asking does not wake it) and the product name
	// did, from the table.
	CCFromName bool
}

// Machine is what a torch build is judged against: the newest CUDA the
// driver supports and the GPUs.
type Machine struct {
	// DriverCUDA is "12.8"; "" when the driver did not say and it could
	// not be derived from the driver's version.
	DriverCUDA string
	// DriverCUDAFrom is the driver version DriverCUDA was derived from
	// (CUDAForDriver, a lower bound) because the driver did not say it;
	// "" when the driver said it.
	DriverCUDAFrom string
	// DriverCUDAUnknown says why DriverCUDA is "" on a machine with a
	// driver, so a rule that needs it can say what it could not check.
	DriverCUDAUnknown string
	GPUs              []GPU

	// platform is whose driver floors judge a derived CUDA version
	// ("linux", "windows"); "" is this host's.
	platform string
	// wheel is the wheel platform whose arch lists judge builds
	// (PlatformLinuxX86, ...); "" is this host's.
	wheel string
}

// wheelPlatform is the wheel platform builds are judged on: the
// machine's, else this host's.
func (m Machine) wheelPlatform() string {
	if m.wheel != "" {
		return m.wheel
	}
	return hostWheel()
}

// hostWheel is the wheel platform of this host.
func hostWheel() string {
	switch {
	case hostPlatform == "windows":
		return PlatformWindows
	case runtime.GOARCH == "arm64":
		return PlatformLinuxARM
	}
	return PlatformLinuxX86
}

// GPUsCounted says which GPUs a build is judged against, for the messages
// that depend on it.
const GPUsCounted = "every GPU on this machine counts, asleep ones included, because torch uses every GPU it sees unless CUDA_VISIBLE_DEVICES hides some"

// MachineOf is the machine the rules judge builds against. Every GPU the
// driver lists counts, asleep or awake: a job may use any GPU torch sees,
// and GPU Canary cannot know which one the next job will use, so a build
// that fails on one of them is not fine for the machine. An asleep GPU's
// compute capability comes from its product name when the driver did not
// give it, and the driver's CUDA version from the driver's version
// (CUDAForDriver, on this platform's floors) when it did not give that.
func MachineOf(g gpu.State) Machine {
	m := Machine{DriverCUDA: g.CUDADriver, platform: hostPlatform}
	switch {
	case m.DriverCUDA != "" || !g.HasDriver():
	case g.Driver == "":
		m.DriverCUDAUnknown = "the driver gave neither its CUDA version nor its own version"
	default:
		cuda, err := CUDAForDriver(g.Driver, hostPlatform)
		if err != nil {
			m.DriverCUDAUnknown = "the driver did not give its CUDA version, and " + err.Error()
		} else {
			m.DriverCUDA, m.DriverCUDAFrom = cuda, g.Driver
		}
	}
	for _, d := range g.Devices {
		x := GPU{Name: d.Name, CC: d.ComputeCapability, Asleep: d.Asleep}
		if x.CC == "" {
			if cc, ok := CCForName(d.Name); ok {
				x.CC, x.CCFromName = cc, true
			}
		}
		m.GPUs = append(m.GPUs, x)
	}
	return m
}

// CCForName is the compute capability of a GPU by its NVML name ("NVIDIA
// GeForce RTX 5090" -> "12.0"), from the table's product names. A name
// that no row or more than one row matches is not known.
func CCForName(name string) (string, bool) {
	found := ""
	f := facts()
	names := f.gpuNames()
	for i, g := range f.gpus {
		for _, re := range names[i] {
			if !re.MatchString(name) {
				continue
			}
			if found != "" && found != g.CC {
				return "", false
			}
			found = g.CC
		}
	}
	return found, found != ""
}

// Label names a GPU for a message: "NVIDIA GeForce RTX 5090 (sm_120,
// asleep)".
func (g GPU) Label() string {
	var notes []string
	switch {
	case g.CC == "":
		notes = append(notes, "compute capability not known")
	case g.CCFromName:
		notes = append(notes, smName(g.CC)+" by its name")
	default:
		notes = append(notes, smName(g.CC))
	}
	if g.Asleep {
		notes = append(notes, "asleep")
	}
	return fmt.Sprintf("%s (%s)", g.Name, strings.Join(notes, ", "))
}

// DriverCUDALabel names the driver's CUDA version for a message: "CUDA
// 12.4", or, when it was derived, "CUDA 12.2 (derived from driver
// 535.104.05, a lower bound)"; "" when it is not known.
func (m Machine) DriverCUDALabel() string {
	switch {
	case m.DriverCUDA == "":
		return ""
	case m.DriverCUDAFrom != "":
		return fmt.Sprintf("CUDA %s (derived from driver %s, a lower bound)", m.DriverCUDA, m.DriverCUDAFrom)
	}
	return "CUDA " + m.DriverCUDA
}

// Describe lists the GPUs for a message: "NVIDIA A100 (sm_80) and NVIDIA
// GeForce RTX 5090 (sm_120, asleep)".
func (m Machine) Describe() string {
	labels := make([]string, len(m.GPUs))
	for i, g := range m.GPUs {
		labels[i] = g.Label()
	}
	return joinAnd(labels)
}

// known are the GPUs whose compute capability is known.
func (m Machine) known() []GPU {
	var out []GPU
	for _, g := range m.GPUs {
		if g.CC != "" {
			out = append(out, g)
		}
	}
	return out
}

// Unknown are the GPUs whose compute capability nobody said, which no
// build can be checked against.
func (m Machine) Unknown() []GPU {
	var out []GPU
	for _, g := range m.GPUs {
		if g.CC == "" {
			out = append(out, g)
		}
	}
	return out
}

// joinAnd writes "a", "a and b", "a, b and c".
func joinAnd(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
