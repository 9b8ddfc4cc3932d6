package procs

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// What Windows keeps of a process's start in its own memory: the PEB
// (found with NtQueryInformationProcess) points to its
// RTL_USER_PROCESS_PARAMETERS, which hold the command line, the current
// folder and the environment block. No API reads these of another
// process, so they are read with ReadProcessMemory, which needs
// PROCESS_VM_READ.
//
// The layouts are golang.org/x/sys/windows's (amd64: the Windows build is
// 64-bit, and a 32-bit process under WOW64 has these 64-bit structures
// too). They are read into byte buffers and their fields taken at those
// offsets, so that no address in the other process is ever held in a Go
// pointer, which the garbage collector would check.

// Offsets of the fields read, from x/sys's layouts.
const (
	pebParamsOff    = unsafe.Offsetof(windows.PEB{}.ProcessParameters)
	paramsCwdOff    = unsafe.Offsetof(windows.RTL_USER_PROCESS_PARAMETERS{}.CurrentDirectory) + unsafe.Offsetof(windows.CURDIR{}.DosPath)
	paramsCmdOff    = unsafe.Offsetof(windows.RTL_USER_PROCESS_PARAMETERS{}.CommandLine)
	paramsEnvOff    = unsafe.Offsetof(windows.RTL_USER_PROCESS_PARAMETERS{}.Environment)
	paramsEnvSzOff  = unsafe.Offsetof(windows.RTL_USER_PROCESS_PARAMETERS{}.EnvironmentSize)
	paramsReadLen   = unsafe.Offsetof(windows.RTL_USER_PROCESS_PARAMETERS{}.EnvironmentVersion)
	ustrBufferOff   = unsafe.Offsetof(windows.NTUnicodeString{}.Buffer)
	pbiPebOff       = unsafe.Offsetof(windows.PROCESS_BASIC_INFORMATION{}.PebBaseAddress)
	pbiSize         = unsafe.Sizeof(windows.PROCESS_BASIC_INFORMATION{})
	maxEnvironBytes = 4 << 20 // far above any real block (32767 characters a variable)
)

// procParams is what a process's parameters say, with where its
// environment block is, to read only when it is needed.
type procParams struct {
	cmdline string
	cwd     string // as Windows keeps it, with a trailing \
	envAddr uintptr
	envSize uintptr // bytes
}

var errNoPEB = errors.New("the process has no PEB (a system process)")

// readParams reads the command line and current folder of the process
// behind h (opened with PROCESS_QUERY_LIMITED_INFORMATION and
// PROCESS_VM_READ).
func readParams(h windows.Handle) (procParams, error) {
	var pbi [pbiSize]byte
	if err := windows.NtQueryInformationProcess(h, windows.ProcessBasicInformation, unsafe.Pointer(&pbi[0]), uint32(len(pbi)), nil); err != nil {
		return procParams{}, fmt.Errorf("locating the PEB: %w", err)
	}
	peb := *(*uintptr)(unsafe.Pointer(&pbi[pbiPebOff]))
	if peb == 0 {
		return procParams{}, errNoPEB
	}
	var ptr [unsafe.Sizeof(uintptr(0))]byte
	if err := readMemory(h, peb+pebParamsOff, ptr[:]); err != nil {
		return procParams{}, fmt.Errorf("reading the PEB: %w", err)
	}
	params := *(*uintptr)(unsafe.Pointer(&ptr[0]))
	if params == 0 {
		return procParams{}, errNoPEB
	}
	var raw [paramsReadLen]byte
	if err := readMemory(h, params, raw[:]); err != nil {
		return procParams{}, fmt.Errorf("reading the process parameters: %w", err)
	}
	var pp procParams
	var err error
	if pp.cmdline, err = readUnicodeString(h, raw[paramsCmdOff:]); err != nil {
		return procParams{}, fmt.Errorf("reading the command line: %w", err)
	}
	if pp.cwd, err = readUnicodeString(h, raw[paramsCwdOff:]); err != nil {
		return procParams{}, fmt.Errorf("reading the current folder: %w", err)
	}
	pp.envAddr = *(*uintptr)(unsafe.Pointer(&raw[paramsEnvOff]))
	pp.envSize = *(*uintptr)(unsafe.Pointer(&raw[paramsEnvSzOff]))
	return pp, nil
}

// readEnviron reads the environment block pp points to, as it is now:
// unlike Linux's /proc/PID/environ, a Windows process's block changes
// when it sets a variable.
func (pp procParams) readEnviron(h windows.Handle) ([]uint16, error) {
	size := min(pp.envSize, maxEnvironBytes) &^ 1
	if pp.envAddr == 0 || size == 0 {
		return nil, errors.New("the process parameters hold no environment block")
	}
	block := make([]uint16, size/2)
	if err := readMemory(h, pp.envAddr, unsafe.Slice((*byte)(unsafe.Pointer(&block[0])), size)); err != nil {
		return nil, fmt.Errorf("reading the environment block: %w", err)
	}
	return block, nil
}

// readUnicodeString reads the UNICODE_STRING at the start of raw, whose
// buffer is in the other process.
func readUnicodeString(h windows.Handle, raw []byte) (string, error) {
	n := *(*uint16)(unsafe.Pointer(&raw[0])) / 2
	addr := *(*uintptr)(unsafe.Pointer(&raw[ustrBufferOff]))
	if n == 0 || addr == 0 {
		return "", nil
	}
	s := make([]uint16, n)
	if err := readMemory(h, addr, unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 2*int(n))); err != nil {
		return "", err
	}
	return windows.UTF16ToString(s), nil
}

// readMemory fills dst from addr in the process behind h, or fails.
func readMemory(h windows.Handle, addr uintptr, dst []byte) error {
	var n uintptr
	if err := windows.ReadProcessMemory(h, addr, &dst[0], uintptr(len(dst)), &n); err != nil {
		return err
	}
	if n != uintptr(len(dst)) {
		return windows.ERROR_PARTIAL_COPY
	}
	return nil
}
