// This file reads a device's health through NVML (health.go): its
// clock-event reasons and throttle counters, temperature margin, PCIe
// link, memory errors and Xid events. Each call that answers NOT_SUPPORTED
// (or that the driver's NVML lacks) is remembered per device and not made
// again: a GeForce says so of ECC once, not every two seconds.

package gpu

// nvmlHealthDevice is the part of a device's calls that reads its health.
// A platform whose device does not implement it (Windows, for now)
// reports no health.
type nvmlHealthDevice interface {
	clocksEventReasons() (uint64, nvmlReturn)
	// fieldValues reads the fields in one call; each has its own return.
	fieldValues(ids []uint32) ([]fieldReading, nvmlReturn)
	marginTemperature() (int32, nvmlReturn)
	pcieCurrent() (gen, width uint32, ret nvmlReturn)
	pcieMax() (gen, width uint32, ret nvmlReturn)
	// cardMaxPCIeGen is the card's own best generation, whatever the slot.
	cardMaxPCIeGen() (uint32, nvmlReturn)
	volatileDBE() (uint64, nvmlReturn)
	retiredPending() (bool, nvmlReturn)
	remappedRows() (pending, failure bool, ret nvmlReturn)
}

// fieldReading is one field of an nvmlFieldValue_t read as an unsigned
// integer.
type fieldReading struct {
	value uint64
	ret   nvmlReturn
}

// NVML field ids read per poll (nvml.h, NVML_FI_DEV_*).
const (
	fieldSWThermal    uint32 = 269 // FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN, ns
	fieldHWThermal    uint32 = 270 // FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN, ns
	fieldHWPowerBrake uint32 = 271 // FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN, ns
	fieldPCIeReplays  uint32 = 94  // FI_DEV_PCIE_REPLAY_COUNTER
)

var healthFields = []uint32{fieldSWThermal, fieldHWThermal, fieldHWPowerBrake, fieldPCIeReplays}

// deviceHealth is what is remembered of one device between snapshots.
type deviceHealth struct {
	// skip names the calls that answered "not supported".
	skip map[string]bool
	// maxLink is the link's best generation and width, which do not
	// change while the driver runs (nil until read).
	maxLink *PCIe
}

// lost reports whether ret says the GPU is off the bus or needs a reset.
func lost(ret nvmlReturn) bool { return ret == retGPUIsLost || ret == retResetRequired }

// readHealth fills d's health from dev. A call that fails otherwise
// adds to errs and is tried again at the next snapshot.
func (b *nvmlBackend) readHealth(dev nvmlHealthDevice, key string, d *Device, errs *[]string) {
	h := b.health[key]
	if h == nil {
		h = &deviceHealth{skip: map[string]bool{}}
		b.health[key] = h
	}
	// ok says whether the call answered; an unsupported one is not
	// asked again, a lost GPU marks the device lost.
	ok := func(what string, ret nvmlReturn) bool {
		switch {
		case ret == retSuccess:
			return true
		case unsupported(ret):
			h.skip[what] = true
			b.log.Debug("not supported on this GPU; not asked again", "what", what, "gpu", key)
		case lost(ret):
			d.Lost = true
			*errs = append(*errs, what+": "+errorString(ret))
		default:
			*errs = append(*errs, what+": "+errorString(ret))
		}
		return false
	}
	ask := func(what string) bool { return !h.skip[what] && !d.Lost }

	if ask("clock event reasons") {
		if mask, ret := dev.clocksEventReasons(); ok("clock event reasons", ret) {
			d.ClocksEventReasons = reasonNames(mask)
		}
	}
	var replays *uint64
	if ask("field values") {
		if vals, ret := dev.fieldValues(healthFields); ok("field values", ret) && len(vals) == len(healthFields) {
			var th Throttle
			slots := []**uint64{&th.SWThermal, &th.HWThermal, &th.HWPowerBrake, &replays}
			counted := false
			for i, v := range vals {
				if v.ret == retSuccess {
					*slots[i] = ptr(v.value)
					counted = counted || i < 3
				} else if lost(v.ret) {
					ok("field values", v.ret)
				}
			}
			if counted {
				d.Throttle = &th
			}
			if !counted && replays == nil {
				// Every field unsupported: the call says nothing here.
				h.skip["field values"] = true
			}
		}
	}
	if ask("margin temperature") {
		if m, ret := dev.marginTemperature(); ok("margin temperature", ret) {
			d.MarginTemperatureC = ptr(m)
		}
	}
	if ask("pcie link") {
		b.readLink(dev, h, d, replays, ok)
	}
	b.readECC(dev, h, d, ok, ask)
}

// readLink reads the PCIe link: its best generation and width once, its
// current ones every time.
func (b *nvmlBackend) readLink(dev nvmlHealthDevice, h *deviceHealth, d *Device, replays *uint64, ok func(string, nvmlReturn) bool) {
	if h.maxLink == nil {
		gen, width, ret := dev.pcieMax()
		if !ok("pcie link", ret) {
			return
		}
		h.maxLink = &PCIe{MaxGen: gen, MaxWidth: width}
		if g, ret := dev.cardMaxPCIeGen(); ret == retSuccess {
			h.maxLink.CardMaxGen = g
		}
	}
	gen, width, ret := dev.pcieCurrent()
	if !ok("pcie link", ret) {
		return
	}
	link := *h.maxLink
	link.Gen, link.Width, link.Replays = gen, width, replays
	d.PCIe = &link
}

// readECC reads the memory-error state; each part on its own, since a
// card may keep one and not another (row remapping is Ampere and later).
func (b *nvmlBackend) readECC(dev nvmlHealthDevice, h *deviceHealth, d *Device, ok func(string, nvmlReturn) bool, ask func(string) bool) {
	var e ECC
	if ask("ecc errors") {
		if n, ret := dev.volatileDBE(); ok("ecc errors", ret) {
			e.VolatileDBE = ptr(n)
		}
	}
	if ask("retired pages") {
		if p, ret := dev.retiredPending(); ok("retired pages", ret) {
			e.RetiredPending = ptr(p)
		}
	}
	if ask("remapped rows") {
		if p, f, ret := dev.remappedRows(); ok("remapped rows", ret) {
			e.RemapPending, e.RemapFailure = ptr(p), ptr(f)
		}
	}
	if e != (ECC{}) {
		d.ECC = &e
	}
}
