//go:build !linux && !windows

package filefacts

import "io/fs"

// Of is fi's stamp where GPU Canary reads no device, inode or change
// time (macOS and the BSDs name those fields differently, and no GPU
// Canary user keeps environments there): the size and modification time.
func Of(fi fs.FileInfo) Stamp {
	return Stamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
}
