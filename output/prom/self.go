package prom

import (
	"runtime"
)

// The agent's own metrics, on its /metrics only (a textfile or `check
// --format prom` carries gpucanary_ metrics alone): what the agent costs
// the machine it watches, under the names every Go exporter uses, so the
// usual dashboards and alerts on go_ and process_ metrics work unchanged.
// A subset of what the Prometheus client library gave: what is cheap to
// read (runtime.ReadMemStats, /proc/self), and nothing of its summaries.

var (
	descGoInfo       = newDesc("go_info", "The Go release the agent was built with; always 1.", gaugeKind, "version")
	descGoroutines   = newDesc("go_goroutines", "Goroutines that exist now.", gaugeKind)
	descThreads      = newDesc("go_threads", "Operating system threads the Go runtime has made.", gaugeKind)
	descGOMAXPROCS   = newDesc("go_sched_gomaxprocs_threads", "GOMAXPROCS: how many threads may run Go code at once.", gaugeKind)
	descAlloc        = newDesc("go_memstats_alloc_bytes", "Bytes of heap objects allocated and not yet freed.", gaugeKind)
	descAllocTotal   = newDesc("go_memstats_alloc_bytes_total", "Bytes allocated for heap objects since the agent started, freed or not.", counterKind)
	descSys          = newDesc("go_memstats_sys_bytes", "Bytes of memory the Go runtime obtained from the operating system.", gaugeKind)
	descHeapAlloc    = newDesc("go_memstats_heap_alloc_bytes", "Bytes of heap objects allocated and not yet freed (the same as go_memstats_alloc_bytes).", gaugeKind)
	descHeapInuse    = newDesc("go_memstats_heap_inuse_bytes", "Bytes in heap spans that hold at least one object.", gaugeKind)
	descHeapObjects  = newDesc("go_memstats_heap_objects", "Heap objects allocated and not yet freed.", gaugeKind)
	descNextGC       = newDesc("go_memstats_next_gc_bytes", "The heap size at which the next garbage collection starts.", gaugeKind)
	descLastGC       = newDesc("go_memstats_last_gc_time_seconds", "When the last garbage collection ended, in seconds since the epoch (0 before the first).", gaugeKind)
	descCPUSeconds   = newDesc("process_cpu_seconds_total", "CPU time the agent has used, user and system, in seconds.", counterKind)
	descResident     = newDesc("process_resident_memory_bytes", "The agent's resident memory (RSS), in bytes.", gaugeKind)
	descVirtual      = newDesc("process_virtual_memory_bytes", "The agent's virtual memory size, in bytes.", gaugeKind)
	descOpenFDs      = newDesc("process_open_fds", "File descriptors the agent has open.", gaugeKind)
	descMaxFDs       = newDesc("process_max_fds", "The most file descriptors the agent may open (its soft limit).", gaugeKind)
	descStartSeconds = newDesc("process_start_time_seconds", "When the agent started, in seconds since the epoch.", gaugeKind)
)

// selfDescs are every family selfCollector may give.
var selfDescs = []*Desc{
	descGoInfo, descGoroutines, descThreads, descGOMAXPROCS, descAlloc, descAllocTotal, descSys, descHeapAlloc,
	descHeapInuse, descHeapObjects, descNextGC, descLastGC,
	descCPUSeconds, descResident, descVirtual, descOpenFDs, descMaxFDs, descStartSeconds,
}

// selfCollector gives the agent's go_ and process_ metrics.
type selfCollector struct {
	// proc is the /proc the process metrics are read from (Linux).
	proc string
}

var _ source = selfCollector{}

func (c selfCollector) collect(b *batch) {
	b.add(descGoInfo, 1, runtime.Version())
	b.add(descGoroutines, float64(runtime.NumGoroutine()))
	threads, _ := runtime.ThreadCreateProfile(nil)
	b.add(descThreads, float64(threads))
	b.add(descGOMAXPROCS, float64(runtime.GOMAXPROCS(0)))
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.add(descAlloc, float64(m.Alloc))
	b.add(descAllocTotal, float64(m.TotalAlloc))
	b.add(descSys, float64(m.Sys))
	b.add(descHeapAlloc, float64(m.HeapAlloc))
	b.add(descHeapInuse, float64(m.HeapInuse))
	b.add(descHeapObjects, float64(m.HeapObjects))
	b.add(descNextGC, float64(m.NextGC))
	b.add(descLastGC, float64(m.LastGC)/1e9)
	collectProcess(b, c.proc)
}
