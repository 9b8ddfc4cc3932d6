//go:build windows && (amd64 || arm64)

// This file queries the System event log through the Windows event log
// API (wevtapi.dll), for the display driver's resets (resets.go). The
// System log is readable without administrator rights.

package gpu

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	modWevtapi    = windows.NewLazySystemDLL("wevtapi.dll")
	procEvtQuery  = modWevtapi.NewProc("EvtQuery")
	procEvtNext   = modWevtapi.NewProc("EvtNext")
	procEvtRender = modWevtapi.NewProc("EvtRender")
	procEvtClose  = modWevtapi.NewProc("EvtClose")
)

// Values winevt.h and winerror.h give.
const (
	evtQueryChannelPath      = 0x1   // EvtQueryChannelPath
	evtQueryForwardDirection = 0x100 // EvtQueryForwardDirection: oldest first
	evtRenderEventXML        = 1     // EvtRenderEventXml
	evtNextTimeoutMS         = 2000
	evtBatch                 = 16
	// maxEvents bounds one query: a driver that resets in a loop must not
	// make a poll read the whole log.
	maxEvents = 64
)

// queryEventLog is an eventQuery over the System log.
func queryEventLog(ctx context.Context, xpath string) ([]string, error) {
	for _, p := range []*windows.LazyProc{procEvtQuery, procEvtNext, procEvtRender, procEvtClose} {
		if err := p.Find(); err != nil {
			return nil, fmt.Errorf("the event log API: %w", err)
		}
	}
	channel, _ := windows.UTF16PtrFromString("System")
	query, err := windows.UTF16PtrFromString(xpath)
	if err != nil {
		return nil, fmt.Errorf("an event query: %w", err)
	}
	h, _, err := procEvtQuery.Call(0, uintptr(unsafe.Pointer(channel)), uintptr(unsafe.Pointer(query)), evtQueryChannelPath|evtQueryForwardDirection)
	if h == 0 {
		return nil, fmt.Errorf("querying the System event log: %w", err)
	}
	defer procEvtClose.Call(h)
	var out []string
	for len(out) < maxEvents {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		var events [evtBatch]uintptr
		var n uint32
		r, _, err := procEvtNext.Call(h, evtBatch, uintptr(unsafe.Pointer(&events[0])), evtNextTimeoutMS, 0, uintptr(unsafe.Pointer(&n)))
		if r == 0 {
			if errors.Is(err, windows.ERROR_NO_MORE_ITEMS) {
				break
			}
			return out, fmt.Errorf("reading the System event log: %w", err)
		}
		for _, ev := range events[:n] {
			text, err := renderEventXML(ev)
			procEvtClose.Call(ev)
			if err != nil {
				return out, err
			}
			out = append(out, text)
		}
	}
	return out, nil
}

// renderEventXML renders one event as its XML.
func renderEventXML(ev uintptr) (string, error) {
	var used, props uint32
	r, _, err := procEvtRender.Call(0, ev, evtRenderEventXML, 0, 0, uintptr(unsafe.Pointer(&used)), uintptr(unsafe.Pointer(&props)))
	if r == 0 && !errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER) {
		return "", fmt.Errorf("rendering an event: %w", err)
	}
	buf := make([]uint16, used/2+1)
	r, _, err = procEvtRender.Call(0, ev, evtRenderEventXML, uintptr(len(buf)*2), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&used)), uintptr(unsafe.Pointer(&props)))
	if r == 0 {
		return "", fmt.Errorf("rendering an event: %w", err)
	}
	return windows.UTF16ToString(buf), nil
}
