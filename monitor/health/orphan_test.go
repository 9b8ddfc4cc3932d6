package health

import (
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

func TestCheckGPUMemory(t *testing.T) {
	const gib = uint64(1) << 30
	mem := func(n uint64) *uint64 { return &n }
	proc := func(pid int, m *uint64) gpu.Process {
		return gpu.Process{PID: pid, Type: "compute", UsedMemoryBytes: m}
	}
	a100 := func(used uint64, ps ...gpu.Process) gpu.Device {
		return gpu.Device{Index: 0, Name: "NVIDIA A100-SXM4-80GB", MemoryTotalBytes: 80 * gib, MemoryUsedBytes: used, Processes: ps}
	}
	running := map[int]bool{100: true, 200: true}
	alive := func(pid int) bool { return running[pid] }
	tests := []struct {
		name  string
		g     gpu.State
		alive func(int) bool
		want  []string // each finding's message holds these
	}{
		{"all held by live processes", gpu.State{Devices: []gpu.Device{a100(10*gib, proc(100, mem(9*gib)), proc(200, mem(gib/2)))}}, alive, nil},
		{"8 GiB held by a PID that does not exist", gpu.State{Devices: []gpu.Device{a100(10*gib, proc(100, mem(2*gib)), proc(4242, mem(8*gib)))}}, alive,
			[]string{"GPU 0 (NVIDIA A100-SXM4-80GB): 8.0 GiB is held by no live process", "PID 4242", "-i 0"}},
		{"two gone, one in two lists", gpu.State{Devices: []gpu.Device{a100(10*gib, proc(4243, mem(gib)), proc(4242, mem(gib)), proc(4242, mem(gib)))}}, alive,
			[]string{"2.0 GiB", "PIDs 4242, 4243, which are not running"}},
		{"a gone PID whose memory is not known", gpu.State{Devices: []gpu.Device{a100(10*gib, proc(4242, nil))}}, alive, []string{"GPU 0 (NVIDIA A100-SXM4-80GB): memory is held"}},
		{"used beyond the margin", gpu.State{Devices: []gpu.Device{a100(20*gib, proc(100, mem(10*gib)))}}, alive,
			[]string{"10.0 GiB of its 20.0 GiB in use is held by no process the driver lists", "margin of 4.0 GiB"}},
		{"used within the margin (the driver's own)", gpu.State{Devices: []gpu.Device{a100(13*gib, proc(100, mem(10*gib)))}}, alive, nil},
		{"nothing listed, nothing used", gpu.State{Devices: []gpu.Device{a100(gib / 2)}}, alive, nil},
		{"nothing listed, 6 GiB used", gpu.State{Devices: []gpu.Device{a100(6 * gib)}}, alive, []string{"6.0 GiB of its 6.0 GiB"}},
		{"memory per process not known (WDDM)", gpu.State{Devices: []gpu.Device{a100(20*gib, proc(100, nil))}}, alive, nil},
		{"another PID namespace: nothing judged", gpu.State{Devices: []gpu.Device{a100(10*gib, proc(4242, mem(8*gib)))}}, nil, nil},
		{"WSL2: nothing judged", gpu.State{WSL: true, Devices: []gpu.Device{a100(10 * gib)}}, alive, nil},
		{"MIG: nothing judged", gpu.State{Devices: []gpu.Device{func() gpu.Device { d := a100(20 * gib); d.MIGEnabled = true; return d }()}}, alive, nil},
		{"asleep: nothing judged", gpu.State{Devices: []gpu.Device{func() gpu.Device { d := a100(20 * gib); d.Asleep = true; return d }()}}, alive, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckGPUMemory(tt.g, tt.alive)
			if (len(got) > 0) != (tt.want != nil) {
				t.Fatalf("findings = %+v, want one: %v", got, tt.want != nil)
			}
			for _, f := range got {
				if f.Code != finding.CodeGPUMemoryOrphaned || f.Severity != finding.SeverityWarning || f.Env != "gpu:0" {
					t.Errorf("finding = %+v", f)
				}
				for _, w := range tt.want {
					if !strings.Contains(f.Message, w) {
						t.Errorf("message %q lacks %q", f.Message, w)
					}
				}
			}
		})
	}
}

// TestCheckGPUMemoryPerGPU: each GPU is judged on its own and named.
func TestCheckGPUMemoryPerGPU(t *testing.T) {
	m := uint64(8 << 30)
	g := gpu.State{Devices: []gpu.Device{
		{Index: 0, Name: "A", MemoryTotalBytes: 80 << 30, MemoryUsedBytes: m, Processes: []gpu.Process{{PID: 1, UsedMemoryBytes: &m}}},
		{Index: 1, Name: "B", MemoryTotalBytes: 80 << 30, MemoryUsedBytes: m, Processes: []gpu.Process{{PID: 99, UsedMemoryBytes: &m}}},
	}}
	got := CheckGPUMemory(g, func(pid int) bool { return pid == 1 })
	if len(got) != 1 || got[0].Env != "gpu:1" || !strings.HasPrefix(got[0].Message, "GPU 1 (B): 8.0 GiB") {
		t.Errorf("findings = %+v", got)
	}
}
