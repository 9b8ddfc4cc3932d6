package procs

import (
	"bufio"
	"bytes"
	"strings"
)

// Container is the container (and, on Kubernetes, the pod) a process runs
// in, as its cgroup path names it: no runtime socket and no API server is
// asked, so what the path does not say stays empty. nil on a Proc is a
// process on the host.
type Container struct {
	// ID is the runtime's container ID (64 hex digits for docker,
	// containerd, CRI-O and podman), or the machine name for
	// systemd-nspawn; "" when only the pod is known (a process in the
	// pod's own cgroup).
	ID string `json:"id,omitempty"`
	// Runtime is docker, containerd, cri-o, podman, systemd-nspawn, lxc, or
	// cri where a Kubernetes cgroup (cgroupfs driver) does not say which.
	Runtime string `json:"runtime"`
	// PodUID is the Kubernetes pod's UID, with dashes, on Kubernetes.
	PodUID string `json:"pod_uid,omitempty"`
	// Pod and Namespace are the pod's name and namespace where the node's
	// /var/log/pods/<namespace>_<pod>_<uid>/ folder could be read.
	Pod       string `json:"pod,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// Short is the container's ID as docker ps shows it (12 digits), or the
// nspawn machine's name; the pod's name or UID when there is no ID.
func (c *Container) Short() string {
	if c == nil {
		return ""
	}
	switch {
	case c.ID != "" && isHexID(c.ID):
		return c.ID[:12]
	case c.ID != "":
		return c.ID
	case c.Pod != "":
		return c.Pod
	}
	return c.PodUID
}

// ParseCgroup reads /proc/PID/cgroup's content and says which container
// and pod it names; nil for a process on the host (or a cgroup path that
// names no known runtime). Both cgroup v2's single "0::/path" line and
// v1's per-controller lines are read: the unified line first, then the
// v1 lines in order, and the first path that names a container or pod
// wins.
//
// The forms read, by the last path component that names one:
//   - docker: "/docker/<id>" (cgroupfs), "docker-<id>.scope" (systemd)
//   - containerd: "cri-containerd-<id>.scope", "/<namespace>/<id>" under
//     containerd's own cgroupfs parent is read as a bare ID (below)
//   - CRI-O: "crio-<id>.scope"
//   - podman: "libpod-<id>.scope" (its conmon, "libpod-conmon-", is not
//     the container), "/libpod_parent/libpod-<id>"
//   - systemd-nspawn: "systemd-nspawn@<machine>.service",
//     "machine-<machine>.scope" under machine.slice (systemd's \x2d
//     escapes undone; libvirt's "machine-lxc-…" is lxc, and its
//     "machine-qemu-…" a virtual machine, no container)
//   - Kubernetes pods: "kubepods-<qos>-pod<uid>.slice" or
//     "kubepods-pod<uid>.slice" (systemd, "_" for "-" in the UID),
//     "/kubepods/<qos>/pod<uid>/" or "/kubepods/pod<uid>/" (cgroupfs)
//   - any other component of 64 hex digits is a container ID, of the
//     runtime its parent folder names (docker, libpod_parent), else cri
//     under kubepods, else containerd.
func ParseCgroup(b []byte) *Container {
	var v1 []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := sc.Text()
		hier, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		_, path, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		if hier == "0" && strings.HasPrefix(rest, ":") {
			if c := containerOfPath(path); c != nil {
				return c
			}
			continue
		}
		v1 = append(v1, path)
	}
	for _, path := range v1 {
		if c := containerOfPath(path); c != nil {
			return c
		}
	}
	return nil
}

// scopeForms are systemd units whose name carries a container ID, by
// prefix, and the runtime that names them so.
var scopeForms = []struct{ prefix, runtime string }{
	{"cri-containerd-", "containerd"},
	{"crio-", "cri-o"},
	{"docker-", "docker"},
	{"libpod-", "podman"},
	{"nerdctl-", "containerd"},
}

// containerOfPath finds the container and pod one cgroup path names.
func containerOfPath(path string) *Container {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var c Container
	for i, part := range parts {
		if uid := podUID(part); uid != "" {
			c.PodUID = uid
			continue
		}
		if id, runtime := containerPart(part, parts[:i]); id != "" {
			c.ID, c.Runtime = id, runtime
		}
	}
	if c.ID == "" && c.PodUID == "" {
		return nil
	}
	if c.Runtime == "" {
		c.Runtime = "cri" // a process in the pod's own cgroup
	}
	return &c
}

// containerPart reads one path component as a container, given the
// components above it.
func containerPart(part string, above []string) (id, runtime string) {
	if name, ok := strings.CutPrefix(part, "systemd-nspawn@"); ok {
		if name, ok = strings.CutSuffix(name, ".service"); ok && name != "" {
			return unescapeUnit(name), "systemd-nspawn"
		}
	}
	if name, ok := strings.CutPrefix(part, "machine-"); ok && len(above) > 0 && above[len(above)-1] == "machine.slice" {
		// libvirt registers its guests there too: a QEMU virtual machine
		// is no container, an LXC guest is one of its own kind.
		if name, ok = strings.CutSuffix(name, ".scope"); ok && name != "" {
			name = unescapeUnit(name)
			switch {
			case strings.HasPrefix(name, "qemu-"):
				return "", ""
			case strings.HasPrefix(name, "lxc-"):
				return name, "lxc"
			}
			return name, "systemd-nspawn"
		}
	}
	if strings.HasPrefix(part, "libpod-conmon-") {
		return "", ""
	}
	for _, f := range scopeForms {
		if rest, ok := strings.CutPrefix(part, f.prefix); ok {
			rest = strings.TrimSuffix(rest, ".scope")
			if isHexID(rest) {
				return rest, f.runtime
			}
		}
	}
	if isHexID(part) {
		parent := ""
		if len(above) > 0 {
			parent = above[len(above)-1]
		}
		switch {
		case parent == "docker":
			return part, "docker"
		case parent == "libpod_parent" || strings.HasPrefix(parent, "libpod"):
			return part, "podman"
		case len(above) > 0 && strings.HasPrefix(above[0], "kubepods"):
			return part, "cri"
		}
		return part, "containerd"
	}
	return "", ""
}

// podUID reads a pod's UID from one component: "pod<uid>" (cgroupfs) or
// "kubepods[-<qos>]-pod<uid_with_underscores>.slice" (systemd).
func podUID(part string) string {
	var uid string
	switch {
	case strings.HasPrefix(part, "kubepods") && strings.HasSuffix(part, ".slice"):
		i := strings.LastIndex(part, "-pod")
		if i < 0 {
			return ""
		}
		uid = strings.ReplaceAll(strings.TrimSuffix(part[i+len("-pod"):], ".slice"), "_", "-")
	case strings.HasPrefix(part, "pod"):
		uid = part[len("pod"):]
	default:
		return ""
	}
	if !isUID(uid) {
		return ""
	}
	return uid
}

// isUID reports whether s is a UUID as Kubernetes writes one (8-4-4-4-12
// hex digits).
func isUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !isHex(r) {
				return false
			}
		}
	}
	return true
}

// isHexID reports whether s is a container ID: 64 hex digits.
func isHexID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !isHex(r) {
			return false
		}
	}
	return true
}

func isHex(r rune) bool { return '0' <= r && r <= '9' || 'a' <= r && r <= 'f' }

// unescapeUnit undoes systemd's \xNN escapes in a unit name ("web\x2d1"
// is the machine "web-1").
func unescapeUnit(s string) string {
	if !strings.Contains(s, `\x`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' && isHex(rune(s[i+2])) && isHex(rune(s[i+3])) {
			b.WriteByte(unhex(s[i+2])<<4 | unhex(s[i+3]))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unhex(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}
