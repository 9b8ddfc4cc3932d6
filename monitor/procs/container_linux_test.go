//go:build linux

package procs

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// procFixture is a proc tree of its own, as TestFixtureProcTree's.
type procFixture struct {
	t    *testing.T
	root string
}

func newProcFixture(t *testing.T) procFixture {
	f := procFixture{t: t, root: t.TempDir()}
	f.write("stat", "cpu 1 2 3\nbtime 1700000000\n")
	return f
}

func (f procFixture) write(rel, content string) {
	p := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// python adds a python process with the given cgroup file and maps.
func (f procFixture) python(pid int, cgroup, maps string) {
	n := strconv.Itoa(pid)
	f.write(n+"/stat", n+" (python3) S 1 "+n+" "+n+" 0 -1 4194560 1 0 0 0 1000 500 0 0 20 0 1 0 12345 1000 100 0\n")
	f.write(n+"/status", "Name:\tpython3\nUid:\t0\t0\t0\t0\nNSpid:\t"+n+"\n")
	f.write(n+"/cmdline", "python3\x00train.py\x00")
	f.write(n+"/environ", "HOME=/root\x00")
	f.write(n+"/maps", maps)
	if cgroup != "" {
		f.write(n+"/cgroup", cgroup)
	}
}

const torchCUDAMaps = "7f1000000000-7f1000100000 r-xp 00000000 fd:01 99 /opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so\n"

// TestScanContainers reads each runtime's real cgroup lines from a
// fixture proc tree, and names a Kubernetes pod from a kubelet log folder.
func TestScanContainers(t *testing.T) {
	f := newProcFixture(t)
	logs := t.TempDir()
	if err := os.Mkdir(filepath.Join(logs, "ml_train-llama_"+podID), 0o755); err != nil {
		t.Fatal(err)
	}
	want := map[int]*Container{
		100: nil,
		101: {ID: cid, Runtime: "docker"},
		102: {ID: cid, Runtime: "docker"},
		103: {ID: cid, Runtime: "podman"},
		104: {ID: "web", Runtime: "systemd-nspawn"},
		105: {ID: cid, Runtime: "containerd", PodUID: podID, Pod: "train-llama", Namespace: "ml"},
		106: {ID: cid, Runtime: "cri", PodUID: podID, Pod: "train-llama", Namespace: "ml"},
		107: nil, // no cgroup file (a kernel without cgroups, or gone)
	}
	f.python(100, "0::/user.slice/user-1000.slice/session-2.scope\n", torchCUDAMaps)
	f.python(101, "12:memory:/docker/"+cid+"\n1:name=systemd:/docker/"+cid+"\n0::/\n", torchCUDAMaps)
	f.python(102, "0::/system.slice/docker-"+cid+".scope\n", torchCUDAMaps)
	f.python(103, "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-"+cid+".scope/container\n", torchCUDAMaps)
	f.python(104, "0::/machine.slice/systemd-nspawn@web.service/payload\n", torchCUDAMaps)
	f.python(105, "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"+podID_+".slice/cri-containerd-"+cid+".scope\n", torchCUDAMaps)
	f.python(106, "11:memory:/kubepods/besteffort/pod"+podID+"/"+cid+"\n", torchCUDAMaps)
	f.python(107, "", torchCUDAMaps)

	s := newScanner(Options{ProcRoot: f.root, PodLogRoot: logs})
	ps, err := s.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != len(want) {
		t.Fatalf("%d processes, want %d: %+v", len(ps), len(want), ps)
	}
	for _, p := range ps {
		w := want[p.PID]
		if (p.Container == nil) != (w == nil) || p.Container != nil && *p.Container != *w {
			t.Errorf("PID %d: container = %+v, want %+v", p.PID, p.Container, w)
		}
	}
}

// TestScanWSL: under WSL2 a process that has /dev/dxg open (a link in its
// fd folder) or mapped is on the GPU though NVML lists nothing, with its
// memory unknown; a CUDA build without it computes on the CPU; and off
// WSL2 the fds are not read.
func TestScanWSL(t *testing.T) {
	f := newProcFixture(t)
	f.write("version", "Linux version 5.15.167.4-microsoft-standard-WSL2\n")
	f.python(200, "0::/\n", torchCUDAMaps)
	if err := os.MkdirAll(filepath.Join(f.root, "200", "fd"), 0o755); err != nil {
		t.Fatal(err)
	}
	for fd, target := range map[string]string{"0": "/dev/null", "3": "/dev/dxg", "4": "socket:[12345]"} {
		if err := os.Symlink(target, filepath.Join(f.root, "200", "fd", fd)); err != nil {
			t.Fatal(err)
		}
	}
	f.python(201, "0::/\n", torchCUDAMaps+"7f3000000000-7f3000001000 rw-s 00000000 00:05 7 /dev/dxg\n")
	f.python(202, "0::/\n", torchCUDAMaps)

	rtx := gpu.State{Driver: "566.36", WSL: true, Devices: []gpu.Device{{Name: "NVIDIA GeForce RTX 4090", ComputeCapability: "8.9", Processes: []gpu.Process{}}}}
	tests := []struct {
		wsl     bool
		verdict map[int]Verdict
	}{
		{true, map[int]Verdict{200: VerdictGPU, 201: VerdictGPU, 202: VerdictCUDAIdle}},
		// Off WSL2 the fds are not read: only the mapping says /dev/dxg.
		{false, map[int]Verdict{200: VerdictCUDAIdle, 201: VerdictGPU, 202: VerdictCUDAIdle}},
	}
	for _, tt := range tests {
		s := newScanner(Options{ProcRoot: f.root, WSL: tt.wsl})
		ps, err := s.Scan(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rows := Classify(ps, rtx, nil, nil, DefaultBusyRule, nil, time.Now(), nil)
		for pid, v := range tt.verdict {
			r := rowOf(t, rows, pid)
			if r.Verdict != v {
				t.Errorf("wsl=%v: PID %d verdict = %s (%s), want %s", tt.wsl, pid, r.Verdict, r.Reason, v)
			}
			if v == VerdictGPU && (r.GPUMemoryBytes != nil || r.Reason != wslReason) {
				t.Errorf("wsl=%v: PID %d memory = %v, reason %q: want unknown, the WSL reason", tt.wsl, pid, r.GPUMemoryBytes, r.Reason)
			}
		}
	}
}
