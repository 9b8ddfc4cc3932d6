package procs

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/windows"
)

// readModules fills p's GPULibs and LibPaths from a module snapshot of
// the process (Toolhelp: the DLLs its loader has loaded, 64- and 32-bit),
// the Windows counterpart of /proc/PID/maps. ok is false when the process
// has exited; a process that cannot be read keeps what was read before
// and says so in Unreadable ("modules: ...").
func (s *winScanner) readModules(p *Proc) (ok bool) {
	pid := uint32(p.PID)
	// The snapshot opens the process itself; asking through s.open first
	// finds the protected process before it, and lets a test deny it.
	h, err := s.open(accessModules, pid)
	if processGone(err) {
		return false
	}
	if err != nil {
		p.noteUnreadable("modules", err)
		return true
	}
	windows.CloseHandle(h)
	snap, err := moduleSnapshot(pid)
	if processGone(err) {
		return false
	}
	if err != nil {
		p.noteUnreadable("modules", err)
		return true
	}
	defer windows.CloseHandle(snap)
	var paths []string
	me := windows.ModuleEntry32{Size: uint32(unsafe.Sizeof(windows.ModuleEntry32{}))}
	for err = windows.Module32First(snap, &me); err == nil; err = windows.Module32Next(snap, &me) {
		if _, ok := runtimeLib(windows.UTF16ToString(me.Module[:])); ok {
			// ExePath holds MAX_PATH characters: a deeper path comes back
			// cut, its base name (Module) whole.
			paths = append(paths, windows.UTF16ToString(me.ExePath[:]))
		}
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		p.noteUnreadable("modules", err)
		return true
	}
	setLibs(p, paths)
	return true
}

// moduleSnapshot takes a snapshot of pid's modules. While the process
// starts or loads a DLL the list can change under the snapshot, which then
// fails with ERROR_BAD_LENGTH (or ERROR_PARTIAL_COPY): Microsoft's answer
// is to take it again.
func moduleSnapshot(pid uint32) (windows.Handle, error) {
	for tries := 0; ; tries++ {
		snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPMODULE|windows.TH32CS_SNAPMODULE32, pid)
		if err == nil {
			return snap, nil
		}
		if tries == 4 || !(errors.Is(err, windows.ERROR_BAD_LENGTH) || errors.Is(err, windows.ERROR_PARTIAL_COPY)) {
			return 0, err
		}
	}
}
