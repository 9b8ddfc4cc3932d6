package present

import (
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// Container is where a process runs, for a line about it: "" on the host,
// else "container 3f2a9c5e8b1d (docker)" or, on Kubernetes, "pod
// ml/train-llama, container 3f2a9c5e8b1d (containerd)".
func Container(c *procs.Container) string {
	if c == nil {
		return ""
	}
	s := ""
	switch {
	case c.Pod != "":
		s = "pod " + c.Namespace + "/" + c.Pod
	case c.PodUID != "":
		s = "pod " + c.PodUID
	}
	if c.ID != "" {
		if s != "" {
			s += ", "
		}
		s += "container " + c.Short() + " (" + c.Runtime + ")"
	}
	return s
}
