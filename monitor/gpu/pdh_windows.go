//go:build windows && (amd64 || arm64)

// This file reads the per-process GPU counters Task Manager shows through
// PDH (pdh.dll), and finds each adapter's PCI address from its LUID with
// D3DKMT (gdi32.dll), so that the use lands on the right NVML device on a
// laptop whose integrated GPU has counters too. Matching and summing are
// in wddm.go.

package gpu

import (
	"context"
	"fmt"
	"log/slog"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	modPDH                           = windows.NewLazySystemDLL("pdh.dll")
	procPdhOpenQueryW                = modPDH.NewProc("PdhOpenQueryW")
	procPdhAddEnglishCounterW        = modPDH.NewProc("PdhAddEnglishCounterW")
	procPdhCollectQueryData          = modPDH.NewProc("PdhCollectQueryData")
	procPdhGetFormattedCounterArrayW = modPDH.NewProc("PdhGetFormattedCounterArrayW")
	procPdhCloseQuery                = modPDH.NewProc("PdhCloseQuery")

	modGDI32                      = windows.NewLazySystemDLL("gdi32.dll")
	procD3DKMTOpenAdapterFromLuid = modGDI32.NewProc("D3DKMTOpenAdapterFromLuid")
	procD3DKMTQueryAdapterInfo    = modGDI32.NewProc("D3DKMTQueryAdapterInfo")
	procD3DKMTCloseAdapter        = modGDI32.NewProc("D3DKMTCloseAdapter")
)

// The counters, by their English names (PdhAddEnglishCounterW finds them
// on every display language), every instance.
const (
	counterDedicated   = `\GPU Process Memory(*)\Dedicated Usage`
	counterShared      = `\GPU Process Memory(*)\Shared Usage`
	counterUtilization = `\GPU Engine(*)\Utilization Percentage`
)

// Values pdh.h and pdhmsg.h give.
const (
	pdhFmtDouble      = 0x00000200 // PDH_FMT_DOUBLE
	pdhFmtLarge       = 0x00000400 // PDH_FMT_LARGE
	pdhFmtNoCap100    = 0x00008000 // PDH_FMT_NOCAP100
	pdhMoreData       = 0x800007D2 // PDH_MORE_DATA
	pdhCStatusValid   = 0x00000000 // PDH_CSTATUS_VALID_DATA
	pdhCStatusNew     = 0x00000001 // PDH_CSTATUS_NEW_DATA
	pdhArrayTries     = 4
	kmtAdapterAddress = 6 // KMTQAITYPE_ADAPTERADDRESS (d3dkmthk.h)
)

// pdhFmtCounterValueItem is PDH_FMT_COUNTERVALUE_ITEM_W: the instance name
// and PDH_FMT_COUNTERVALUE (a status and a union read as the format asked).
type pdhFmtCounterValueItem struct {
	name   *uint16
	status uint32
	_      uint32
	value  [8]byte
}

var _ [24]byte = [unsafe.Sizeof(pdhFmtCounterValueItem{})]byte{}

// pdhCounters is one PDH query with the three counters, opened on the
// first read: one collection per poll reads them all.
type pdhCounters struct {
	log     *slog.Logger
	opened  bool
	openErr error
	query   uintptr
	memory  uintptr
	shared  uintptr
	engine  uintptr
	// collected is set after the first collection: utilization is a rate
	// over two.
	collected bool
	// adapters caches each LUID's PCI address ("" when unknown).
	adapters map[string]string
}

// newPDHCounters returns counters that open on first use.
func newPDHCounters(log *slog.Logger) processCounters {
	return &pdhCounters{log: log, adapters: map[string]string{}}
}

// pdhError describes a PDH status.
func pdhError(what string, status uintptr) error {
	return fmt.Errorf("%s: PDH status 0x%08X", what, uint32(status))
}

// open makes the query. Any failure means this system lacks the counters
// (Windows before 10 1709, wine): errNoCounters.
func (c *pdhCounters) open() error {
	if err := procPdhOpenQueryW.Find(); err != nil {
		return fmt.Errorf("%w: %v", errNoCounters, err)
	}
	if err := procPdhAddEnglishCounterW.Find(); err != nil {
		return fmt.Errorf("%w: %v", errNoCounters, err)
	}
	if r, _, _ := procPdhOpenQueryW.Call(0, 0, uintptr(unsafe.Pointer(&c.query))); r != 0 {
		return fmt.Errorf("%w: %v", errNoCounters, pdhError("opening a PDH query", r))
	}
	for _, add := range []struct {
		path    string
		counter *uintptr
	}{{counterDedicated, &c.memory}, {counterShared, &c.shared}, {counterUtilization, &c.engine}} {
		path, _ := windows.UTF16PtrFromString(add.path)
		if r, _, _ := procPdhAddEnglishCounterW.Call(c.query, uintptr(unsafe.Pointer(path)), 0, uintptr(unsafe.Pointer(add.counter))); r != 0 {
			procPdhCloseQuery.Call(c.query)
			c.query = 0
			return fmt.Errorf("%w: %v", errNoCounters, pdhError("adding counter "+add.path, r))
		}
	}
	return nil
}

// read collects the counters and turns them into uses.
func (c *pdhCounters) read(ctx context.Context) ([]processUse, error) {
	if !c.opened {
		c.opened = true
		c.openErr = c.open()
	}
	if c.openErr != nil {
		return nil, c.openErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r, _, _ := procPdhCollectQueryData.Call(c.query); r != 0 {
		return nil, pdhError("collecting GPU counters", r)
	}
	memory, err := pdhArray(c.memory, pdhFmtLarge)
	if err != nil {
		return nil, err
	}
	shared, err := pdhArray(c.shared, pdhFmtLarge)
	if err != nil {
		return nil, err
	}
	var engines []counterValue
	if c.collected {
		if engines, err = pdhArray(c.engine, pdhFmtDouble|pdhFmtNoCap100); err != nil {
			return nil, err
		}
	}
	c.collected = true
	return collectUse(memory, shared, engines, c.adapterOf), nil
}

// pdhArray reads every instance of a wildcard counter; instances without
// valid data are left out.
func pdhArray(counter uintptr, format uint32) ([]counterValue, error) {
	var size, count uint32
	r, _, _ := procPdhGetFormattedCounterArrayW.Call(counter, uintptr(format), uintptr(unsafe.Pointer(&size)), uintptr(unsafe.Pointer(&count)), 0)
	for range pdhArrayTries {
		switch r {
		case 0:
			return nil, nil
		case pdhMoreData:
		default:
			return nil, pdhError("reading GPU counters", r)
		}
		// The items come first in the buffer, their names after them:
		// allocate it 8-byte aligned for the items.
		buf := make([]uint64, (size+7)/8+1)
		size = uint32(len(buf) * 8)
		r, _, _ = procPdhGetFormattedCounterArrayW.Call(counter, uintptr(format), uintptr(unsafe.Pointer(&size)), uintptr(unsafe.Pointer(&count)), uintptr(unsafe.Pointer(&buf[0])))
		if r != 0 {
			continue
		}
		items := unsafe.Slice((*pdhFmtCounterValueItem)(unsafe.Pointer(&buf[0])), count)
		out := make([]counterValue, 0, count)
		for _, it := range items {
			if it.status != pdhCStatusValid && it.status != pdhCStatusNew {
				continue
			}
			v := counterValue{instance: windows.UTF16PtrToString(it.name)}
			if format&pdhFmtLarge != 0 {
				v.value = float64(*(*int64)(unsafe.Pointer(&it.value)))
			} else {
				v.value = *(*float64)(unsafe.Pointer(&it.value))
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, pdhError("reading GPU counters (the list kept growing)", r)
}

// adapterOf gives a LUID's PCI address, asking D3DKMT once per LUID.
func (c *pdhCounters) adapterOf(luid string) string {
	if a, ok := c.adapters[luid]; ok {
		return a
	}
	a := adapterAddress(luid)
	c.adapters[luid] = a
	if a == "" {
		c.log.Debug("the PCI address of a GPU adapter is unknown", "luid", luid)
	}
	return a
}

// The D3DKMT structs of d3dkmthk.h.
type (
	d3dkmtOpenAdapterFromLUID struct {
		luidLow  uint32
		luidHigh int32
		adapter  uint32
	}
	d3dkmtQueryAdapterInfo struct {
		adapter uint32
		typ     uint32
		data    unsafe.Pointer
		size    uint32
	}
	d3dkmtAdapterAddress struct{ bus, device, function uint32 }
)

// adapterAddress asks the graphics kernel for the PCI bus, device and
// function of the adapter with this LUID; "" when it will not say.
func adapterAddress(luid string) string {
	high, low, ok := parseLUID(luid)
	if !ok || procD3DKMTOpenAdapterFromLuid.Find() != nil || procD3DKMTQueryAdapterInfo.Find() != nil {
		return ""
	}
	open := &d3dkmtOpenAdapterFromLUID{luidLow: low, luidHigh: high}
	if r, _, _ := procD3DKMTOpenAdapterFromLuid.Call(uintptr(unsafe.Pointer(open))); r != 0 {
		return ""
	}
	defer procD3DKMTCloseAdapter.Call(uintptr(unsafe.Pointer(&open.adapter)))
	addr := &d3dkmtAdapterAddress{}
	q := &d3dkmtQueryAdapterInfo{adapter: open.adapter, typ: kmtAdapterAddress, data: unsafe.Pointer(addr), size: uint32(unsafe.Sizeof(*addr))}
	if r, _, _ := procD3DKMTQueryAdapterInfo.Call(uintptr(unsafe.Pointer(q))); r != 0 {
		return ""
	}
	return formatBDF(uint(addr.bus), uint(addr.device), uint(addr.function))
}

// close closes the query.
func (c *pdhCounters) close() {
	if c.query != 0 {
		procPdhCloseQuery.Call(c.query)
		c.query = 0
	}
}
