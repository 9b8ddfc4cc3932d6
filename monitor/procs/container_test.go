package procs

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

const (
	cid    = "3f2a9c5e8b1d4f6a7c0e2b4d6f8a1c3e5b7d9f0a2c4e6b8d0f1a3c5e7b9d1f2a"
	podID  = "6e6e2a8c-1b2c-4d3e-8f90-a1b2c3d4e5f6"
	podID_ = "6e6e2a8c_1b2c_4d3e_8f90_a1b2c3d4e5f6"
)

// TestParseCgroup reads /proc/PID/cgroup as each runtime writes it, in
// cgroup v1 (a line per controller) and v2 (one "0::" line), with the
// cgroupfs and systemd drivers.
func TestParseCgroup(t *testing.T) {
	tests := []struct {
		name, cgroup string
		want         *Container
	}{
		{"host v2", "0::/user.slice/user-1000.slice/session-2.scope\n", nil},
		{"host v1", "12:memory:/user.slice\n1:name=systemd:/user.slice/user-1000.slice/session-2.scope\n0::/user.slice\n", nil},
		{"host v1 root", "9:name=systemd:/\n4:memory:/process_api/54366bfda1d1ae5a7da19faab2bf2b28\n0::/\n", nil},
		{"docker v1 cgroupfs", "12:pids:/docker/" + cid + "\n11:memory:/docker/" + cid + "\n1:name=systemd:/docker/" + cid + "\n0::/\n",
			&Container{ID: cid, Runtime: "docker"}},
		{"docker v2 systemd", "0::/system.slice/docker-" + cid + ".scope\n", &Container{ID: cid, Runtime: "docker"}},
		{"docker v2 cgroupfs", "0::/docker/" + cid + "\n", &Container{ID: cid, Runtime: "docker"}},
		{"containerd ctr v2", "0::/default/" + cid + "\n", &Container{ID: cid, Runtime: "containerd"}},
		{"nerdctl v2 systemd", "0::/system.slice/nerdctl-" + cid + ".scope\n", &Container{ID: cid, Runtime: "containerd"}},
		{"podman rootful v2", "0::/machine.slice/libpod-" + cid + ".scope/container\n", &Container{ID: cid, Runtime: "podman"}},
		{"podman rootless v2", "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + cid + ".scope/container\n",
			&Container{ID: cid, Runtime: "podman"}},
		{"podman v1 cgroupfs", "10:memory:/libpod_parent/libpod-" + cid + "\n1:name=systemd:/libpod_parent/libpod-" + cid + "\n",
			&Container{ID: cid, Runtime: "podman"}},
		{"podman conmon is not the container", "0::/machine.slice/libpod-conmon-" + cid + ".scope\n", nil},
		{"nspawn service v2", "0::/machine.slice/systemd-nspawn@web.service/payload\n", &Container{ID: "web", Runtime: "systemd-nspawn"}},
		{"nspawn v1 escaped", "1:name=systemd:/machine.slice/systemd-nspawn@web\\x2d1.service\n", &Container{ID: "web-1", Runtime: "systemd-nspawn"}},
		{"nspawn machine scope", "0::/machine.slice/machine-build\\x2dbox.scope/payload\n", &Container{ID: "build-box", Runtime: "systemd-nspawn"}},
		{"a qemu machine is no container", "0::/machine.slice/machine-qemu\\x2d1\\x2dwin.scope\n", nil},
		{"libvirt lxc", "0::/machine.slice/machine-lxc\\x2d4242\\x2dweb.scope\n", &Container{ID: "lxc-4242-web", Runtime: "lxc"}},
		{"k8s v2 systemd burstable containerd", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + podID_ + ".slice/cri-containerd-" + cid + ".scope\n",
			&Container{ID: cid, Runtime: "containerd", PodUID: podID}},
		{"k8s v2 systemd besteffort crio", "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + podID_ + ".slice/crio-" + cid + ".scope\n",
			&Container{ID: cid, Runtime: "cri-o", PodUID: podID}},
		{"k8s v2 systemd guaranteed", "0::/kubepods.slice/kubepods-pod" + podID_ + ".slice/cri-containerd-" + cid + ".scope\n",
			&Container{ID: cid, Runtime: "containerd", PodUID: podID}},
		{"k8s v2 systemd docker shim", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + podID_ + ".slice/docker-" + cid + ".scope\n",
			&Container{ID: cid, Runtime: "docker", PodUID: podID}},
		{"k8s v1 cgroupfs burstable", "11:memory:/kubepods/burstable/pod" + podID + "/" + cid + "\n1:name=systemd:/kubepods/burstable/pod" + podID + "/" + cid + "\n",
			&Container{ID: cid, Runtime: "cri", PodUID: podID}},
		{"k8s v1 cgroupfs besteffort", "4:cpu,cpuacct:/kubepods/besteffort/pod" + podID + "/" + cid + "\n", &Container{ID: cid, Runtime: "cri", PodUID: podID}},
		{"k8s v1 cgroupfs guaranteed", "4:memory:/kubepods/pod" + podID + "/" + cid + "\n", &Container{ID: cid, Runtime: "cri", PodUID: podID}},
		{"k8s v2 cgroupfs", "0::/kubepods/burstable/pod" + podID + "/" + cid + "\n", &Container{ID: cid, Runtime: "cri", PodUID: podID}},
		{"k8s pod cgroup only", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + podID_ + ".slice\n",
			&Container{Runtime: "cri", PodUID: podID}},
		{"v2 line wins over v1", "4:memory:/docker/" + cid + "\n0::/system.slice/crio-" + cid + ".scope\n", &Container{ID: cid, Runtime: "cri-o"}},
		{"hybrid: empty v2, docker in v1", "0::/\n4:memory:/docker/" + cid + "\n", &Container{ID: cid, Runtime: "docker"}},
		{"an nspawn unit without a name", "0::/machine.slice/systemd-nspawn@.service\n0::/machine.slice/machine-.scope\n", nil},
		{"too short an ID", "0::/docker/3f2a9c5e8b1d\n", nil},
		{"garbage", "no colons here\n::\n\x00\x01", nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseCgroup([]byte(tt.cgroup))
			switch {
			case got == nil && tt.want == nil:
			case got == nil || tt.want == nil || *got != *tt.want:
				t.Errorf("ParseCgroup(%q) = %+v, want %+v", tt.cgroup, got, tt.want)
			}
		})
	}
}

func TestContainerShort(t *testing.T) {
	tests := []struct {
		c    *Container
		want string
	}{
		{nil, ""},
		{&Container{ID: cid, Runtime: "docker"}, cid[:12]},
		{&Container{ID: "web-1", Runtime: "systemd-nspawn"}, "web-1"},
		{&Container{PodUID: podID, Pod: "train-0"}, "train-0"},
		{&Container{PodUID: podID}, podID},
	}
	for _, tt := range tests {
		if got := tt.c.Short(); got != tt.want {
			t.Errorf("%+v.Short() = %q, want %q", tt.c, got, tt.want)
		}
	}
}

// TestPodIndex names pods from a kubelet log folder; one it cannot read,
// or a name of another form, names nothing, and a pod that appears later
// is named once the folder is read again.
func TestPodIndex(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"ml_train-llama_" + podID, "kube-system_nvidia-dcgm_not-a-uid", "stray"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "ml_file_"+podID), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0)
	x := podIndex{root: root, now: func() time.Time { return now }}
	c := &Container{ID: cid, Runtime: "containerd", PodUID: podID}
	x.fill(c)
	if c.Pod != "train-llama" || c.Namespace != "ml" {
		t.Errorf("pod = %q/%q, want ml/train-llama", c.Namespace, c.Pod)
	}
	later := "0d0d0d0d-1111-2222-3333-444455556666"
	if err := os.Mkdir(filepath.Join(root, "team-a_job_with_underscores_"+later), 0o755); err != nil {
		t.Fatal(err)
	}
	d := &Container{PodUID: later}
	x.fill(d)
	if d.Pod != "" {
		t.Errorf("read again within %s: %+v", podReread, d)
	}
	now = now.Add(podReread)
	x.fill(d)
	if d.Pod != "job_with_underscores" || d.Namespace != "team-a" {
		t.Errorf("after %s: %+v", podReread, d)
	}
	gone := podIndex{root: filepath.Join(root, "absent"), now: func() time.Time { return now }}
	e := &Container{PodUID: podID}
	gone.fill(e)
	if e.Pod != "" || e.Namespace != "" {
		t.Errorf("no folder: %+v", e)
	}
}

// FuzzParseCgroup: any cgroup file gives nil or a container with a
// runtime, and an ID or pod UID of the forms documented.
func FuzzParseCgroup(f *testing.F) {
	f.Add("0::/system.slice/docker-" + cid + ".scope\n")
	f.Add("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + podID_ + ".slice/cri-containerd-" + cid + ".scope\n")
	f.Add("1:name=systemd:/machine.slice/systemd-nspawn@web\\x2d1.service\n")
	f.Add("11:memory:/kubepods/besteffort/pod" + podID + "/" + cid + "\n")
	f.Fuzz(func(t *testing.T, s string) {
		c := ParseCgroup([]byte(s))
		if c == nil {
			return
		}
		if c.Runtime == "" || c.ID == "" && c.PodUID == "" {
			t.Errorf("ParseCgroup(%q) = %+v", s, c)
		}
		if c.PodUID != "" && !isUID(c.PodUID) {
			t.Errorf("ParseCgroup(%q): pod UID %q", s, c.PodUID)
		}
		if c.Short() == "" {
			t.Errorf("ParseCgroup(%q) = %+v: nothing to show", s, c)
		}
	})
}
