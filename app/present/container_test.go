package present

import (
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/procs"
)

func TestContainer(t *testing.T) {
	id := strings.Repeat("3f", 32)
	uid := "6e6e2a8c-1b2c-4d3e-8f90-a1b2c3d4e5f6"
	for _, tc := range []struct {
		c    *procs.Container
		want string
	}{
		{nil, ""},
		{&procs.Container{ID: id, Runtime: "docker"}, "container 3f3f3f3f3f3f (docker)"},
		{&procs.Container{ID: "web", Runtime: "systemd-nspawn"}, "container web (systemd-nspawn)"},
		{&procs.Container{ID: id, Runtime: "containerd", PodUID: uid, Pod: "train-llama", Namespace: "ml"}, "pod ml/train-llama, container 3f3f3f3f3f3f (containerd)"},
		{&procs.Container{Runtime: "cri", PodUID: uid}, "pod " + uid},
	} {
		if got := Container(tc.c); got != tc.want {
			t.Errorf("Container(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}
