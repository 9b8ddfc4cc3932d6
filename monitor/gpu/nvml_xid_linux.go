//go:build linux && cgo

// This file drains NVML's Xid events (Linux only: "Events are not
// supported on Windows", nvml.h). The event set is made at the first
// snapshot after a successful Init, each device is registered once, and
// every snapshot takes what arrived since the last without waiting.

package gpu

import (
	"log/slog"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// maxXidsPerSnapshot bounds one drain: a GPU that floods Xids (45 on every
// aborted job) must not hold the poll.
const maxXidsPerSnapshot = 256

// xidEvents is the event set and the devices registered with it.
type xidEvents struct {
	log *slog.Logger
	set nvml.EventSet
	// off is set once the set cannot be made: not asked again.
	off bool
	// index is each registered device's index; tried records every
	// index registration was tried for, registered or not.
	index map[nvml.Device]int
	tried map[int]bool
}

var _ nvmlXidSource = goNVML{}

// xids drains the Xid events that arrived since the last call.
func (g goNVML) xids(devices int) map[int][]Xid {
	e := g.events
	if e == nil || e.off {
		return nil
	}
	if e.set == nil {
		if !g.has[symEventSetCreate] {
			e.off = true
			return nil
		}
		set, ret := g.lib.EventSetCreate()
		if ret != nvml.SUCCESS {
			e.off = true
			e.log.Info("no Xid events from this driver", "reason", errorString(nvmlReturn(ret)))
			return nil
		}
		e.set, e.index, e.tried = set, map[nvml.Device]int{}, map[int]bool{}
	}
	for i := range devices {
		if e.tried[i] {
			continue
		}
		e.tried[i] = true
		dev, ret := g.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		if mask, ret := dev.GetSupportedEventTypes(); ret != nvml.SUCCESS || mask&nvml.EventTypeXidCriticalError == 0 {
			e.log.Info("this GPU reports no Xid events", "index", i)
			continue
		}
		if ret := dev.RegisterEvents(nvml.EventTypeXidCriticalError, e.set); ret != nvml.SUCCESS {
			e.log.Info("registering for Xid events", "index", i, "err", errorString(nvmlReturn(ret)))
			continue
		}
		e.index[dev] = i
	}
	if len(e.index) == 0 {
		return nil
	}
	out := map[int][]Xid{}
	for range maxXidsPerSnapshot {
		data, ret := e.set.Wait(0)
		if ret != nvml.SUCCESS {
			break // TIMEOUT: nothing more now
		}
		if data.EventType&nvml.EventTypeXidCriticalError == 0 {
			continue
		}
		if i, ok := e.index[data.Device]; ok {
			out[i] = append(out[i], Xid{Xid: data.EventData})
		}
	}
	return out
}

// free releases the event set, before Shutdown.
func (e *xidEvents) free() {
	if e != nil && e.set != nil {
		e.set.Free()
		e.set = nil
	}
}
