package procs

import (
	"os"
	"strings"
	"time"
)

// DefaultPodLogRoot is where the kubelet keeps each pod's logs, in one
// folder per pod named <namespace>_<pod>_<uid>: the only place on a node
// that ties a pod's UID to its name without asking the API server.
const DefaultPodLogRoot = "/var/log/pods"

// podIndex names pods by UID from the pod log folders. It reads the
// folder again when a UID is not found, at most once per podReread, so a
// pod that started since is named and a machine without the folder pays
// one failed read a minute.
type podIndex struct {
	root  string
	now   func() time.Time
	byUID map[string][2]string // namespace, name
	read  time.Time
}

const podReread = time.Minute

// fill sets the pod's name and namespace on c when its UID is known here.
func (x *podIndex) fill(c *Container) {
	if c == nil || c.PodUID == "" || x.root == "" {
		return
	}
	n, ok := x.byUID[c.PodUID]
	if !ok && (x.read.IsZero() || x.now().Sub(x.read) >= podReread) {
		x.load()
		n, ok = x.byUID[c.PodUID]
	}
	if ok {
		c.Namespace, c.Pod = n[0], n[1]
	}
}

// load reads the folder's names. A namespace and a UID hold no
// underscore (Kubernetes names are DNS labels), so the name is what lies
// between the first and the last one.
func (x *podIndex) load() {
	x.read = x.now()
	ents, err := os.ReadDir(x.root)
	if err != nil {
		return
	}
	x.byUID = make(map[string][2]string, len(ents))
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		first, last := strings.IndexByte(name, '_'), strings.LastIndexByte(name, '_')
		if first <= 0 || last <= first+1 || !isUID(name[last+1:]) {
			continue
		}
		x.byUID[name[last+1:]] = [2]string{name[:first], name[first+1 : last]}
	}
}
