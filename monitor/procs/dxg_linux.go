package procs

import (
	"os"
	"path/filepath"
	"strconv"
)

// dxgDevice is WSL2's paravirtualized GPU: every process that uses the GPU
// under WSL2 (CUDA through libdxcore, D3D12) opens it.
const dxgDevice = "/dev/dxg"

// hasOpen reports whether the process has the file at path open, from
// its /proc/PID/fd links. It is read only under WSL2 and only for a
// workload whose maps did not already say: a process's descriptors are
// many links to read.
func (s *scanner) hasOpen(pid int, path string) bool {
	dir := filepath.Join(s.root, strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && l == path {
			return true
		}
	}
	return false
}
