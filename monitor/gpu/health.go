// This file holds what the driver says of a device's health while it
// trains: why its clocks are held back, its temperature headroom, its PCIe
// link, its memory errors, the Xid errors it raised, and whether it is
// lost, and the display driver's resets. monitor/health judges them over
// time; here they are only read.

package gpu

import "time"

// Clock-event (throttle) reasons as NVML names its bits
// (nvmlClocksEventReason*), in the words Device.ClocksEventReasons and
// the scenario file use.
const (
	ReasonGPUIdle           = "gpu_idle"
	ReasonSWPowerCap        = "sw_power_cap"
	ReasonHWSlowdown        = "hw_slowdown"
	ReasonSWThermalSlowdown = "sw_thermal_slowdown"
	ReasonHWThermalSlowdown = "hw_thermal_slowdown"
	ReasonHWPowerBrake      = "hw_power_brake"
)

// reasonBits are the bits of nvmlClocksEventReason (nvml.h) named above,
// in the order they are listed.
var reasonBits = []struct {
	bit  uint64
	name string
}{
	{0x1, ReasonGPUIdle},
	{0x4, ReasonSWPowerCap},
	{0x8, ReasonHWSlowdown},
	{0x20, ReasonSWThermalSlowdown},
	{0x40, ReasonHWThermalSlowdown},
	{0x80, ReasonHWPowerBrake},
}

// reasonNames turns NVML's clock-event bit mask into names; bits not
// named here (application clocks, display clocks) are left out.
func reasonNames(mask uint64) []string {
	out := []string{}
	for _, r := range reasonBits {
		if mask&r.bit != 0 {
			out = append(out, r.name)
		}
	}
	return out
}

// Throttle holds NVML's cumulative throttle counters, in nanoseconds of
// time spent held back since the driver loaded (the
// FI_DEV_CLOCKS_EVENT_REASON_* fields). A nil counter is one the driver
// does not keep for this GPU; NVML has no counter for HW slowdown, which
// only the scenario file gives.
type Throttle struct {
	SWThermal    *uint64 `json:"sw_thermal,omitempty"`
	HWThermal    *uint64 `json:"hw_thermal,omitempty"`
	HWPowerBrake *uint64 `json:"hw_power_brake,omitempty"`
	HWSlowdown   *uint64 `json:"hw_slowdown,omitempty"`
}

// PCIe is the device's PCIe link now and at most. MaxGen and MaxWidth
// already include the slot (a x16 card in a x8 slot has MaxWidth 8);
// CardMaxGen is the card's own best generation, where the driver says
// it, so that a slot that holds the card back can be told apart from a
// link that trained down.
type PCIe struct {
	Gen        uint32 `json:"gen"`
	Width      uint32 `json:"width"`
	MaxGen     uint32 `json:"max_gen"`
	MaxWidth   uint32 `json:"max_width"`
	CardMaxGen uint32 `json:"card_max_gen,omitempty"`
	// Replays is the link's replay counter since the driver loaded; nil
	// when not read.
	Replays *uint64 `json:"replays,omitempty"`
}

// ECC is what a professional or data-center card says of its memory
// errors. Each part is nil where the driver does not say (GeForce
// answers NOT_SUPPORTED for all of them).
type ECC struct {
	// VolatileDBE is the count of uncorrected (double-bit) errors since
	// the driver loaded.
	VolatileDBE *uint64 `json:"volatile_dbe,omitempty"`
	// RetiredPending is true when pages are waiting to be retired at the
	// next reset.
	RetiredPending *bool `json:"retired_pending,omitempty"`
	// RemapPending and RemapFailure are the row-remapper's state (Ampere
	// and later): a remap waits for a reset, or one failed.
	RemapPending *bool `json:"remap_pending,omitempty"`
	RemapFailure *bool `json:"remap_failure,omitempty"`
}

// Xid is one Xid error the driver raised on a device since the last
// snapshot.
type Xid struct {
	Xid uint64 `json:"xid"`
}

// DriverReset is one recovery of the display driver after it stopped
// responding (Windows' timeout detection and recovery, TDR: the System
// log's Display event 4101). CUDA work running at that moment is lost:
// the jobs see "the launch timed out and was terminated".
type DriverReset struct {
	// Driver is the driver that was reset, as the event names it
	// ("nvlddmkm", NVIDIA's kernel driver).
	Driver string `json:"driver"`
	// Time is when Windows logged it; zero when unknown (a scenario).
	Time time.Time `json:"time,omitzero"`
}
