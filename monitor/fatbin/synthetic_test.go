package fatbin

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestSynthetic(t *testing.T) {
	ptx90a := []byte("//\n.version 8.0\n.target sm_90a\n.address_size 64\n")
	for _, tc := range []struct {
		name    string
		lib     []byte
		want    string
		runtime string
	}{
		{"elf compressed", elfLib(container(entry{kindELF, 86, zstd, make([]byte, 100)}, entry{kindPTX, 80, zstd, make([]byte, 33)}), "libcudart.so.12", "libc.so.6"),
			"sm_86 · PTX 80", "libcudart.so.12"},
		{"elf arch-specific cubin, ABI 7", elfLib(container(entry{kindELF, 90, 0x11, cubin(7, 0x85a)}, entry{kindPTX, 90, 0x11, ptx90a})),
			"sm_90a · PTX 90a", ""},
		{"elf arch-specific cubin, ABI 8", elfLib(container(entry{kindELF, 100, 0x11, cubin(8, 0x6408)})),
			"sm_100a", ""},
		{"elf plain cubin", elfLib(container(entry{kindELF, 90, 0x11, cubin(7, 0x45a)})),
			"sm_90", ""},
		{"elf several containers", elfLib(append(append(container(entry{kindELF, 75, zstd, nil}), make([]byte, 8)...), container(entry{kindELF, 120, zstd, []byte{1}})...)),
			"sm_75 sm_120", ""},
		{"elf PTX only", elfLib(container(entry{kindPTX, 52, zstd, []byte("x")})), "PTX 52", ""},
		{"pe", peLib(container(entry{kindELF, 61, zstd, make([]byte, 7)}), false, "KERNEL32.dll", "cudart64_12.dll"),
			"sm_61", "cudart64_12.dll"},
		{"pe delay-loaded cudart", peLib(container(entry{kindELF, 89, zstd, nil}), true, "CUDART64_110.DLL"),
			"sm_89", "cudart64_110.dll"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := Read(bytes.NewReader(tc.lib), int64(len(tc.lib)))
			if err != nil {
				t.Fatal(err)
			}
			if k.String() != tc.want || k.Runtime != tc.runtime {
				t.Errorf("got %q runtime %q, want %q runtime %q", k, k.Runtime, tc.want, tc.runtime)
			}
		})
	}
}

func TestNoFatbin(t *testing.T) {
	for name, lib := range map[string][]byte{
		"elf": elfLib(nil, "libcudart.so.12"),
		"pe":  peLib(nil, false, "cudart64_12.dll"),
	} {
		k, err := Read(bytes.NewReader(lib), int64(len(lib)))
		if !errors.Is(err, ErrNoFatbin) {
			t.Errorf("%s: err %v, want ErrNoFatbin", name, err)
		}
		if k.Runtime == "" {
			t.Errorf("%s: the runtime is read even without kernels", name)
		}
	}
}

// TestMalformed breaks a good library in each way the reader checks:
// each is an error naming what was wrong, never a panic or a guess.
func TestMalformed(t *testing.T) {
	good := elfLib(container(entry{kindELF, 86, zstd, make([]byte, 40)}))
	fatOff := bytes.Index(good, []byte{0x50, 0xed, 0x55, 0xba})
	set := func(b []byte, at int, v ...byte) []byte {
		c := bytes.Clone(b)
		copy(c[at:], v)
		return c
	}
	for _, tc := range []struct {
		name string
		lib  []byte
		want string
	}{
		{"empty", nil, "magic number"},
		{"not a library", []byte("#!/bin/sh\necho hi\n"), "neither an ELF nor a PE"},
		{"truncated ELF header", good[:20], "ELF header"},
		{"bad class", set(good, 4, 9), "ELF class"},
		{"bad encoding", set(good, 5, 9), "data encoding"},
		{"section table past the end", good[:len(good)-10], "section header table"},
		{"container size overruns", set(good, fatOff+8, 0xff, 0xff, 0xff), "overrun the section"},
		{"entry header size too small", set(good, fatOff+16+4, 8), "overrun the container"},
		{"entry payload overruns", set(good, fatOff+16+8, 0xff, 0xff), "overrun the container"},
		{"entry arch is not one", set(good, fatOff+16+28, 0, 0, 0, 0), "not a GPU architecture"},
		{"garbage between containers", set(good, fatOff, 1, 2, 3, 4), "no fat binary container"},
		{"truncated PE", peLib(nil, false)[:70], "PE header"},
		{"PE offset outside", set(peLib(nil, false), 60, 0xff, 0xff, 0xff, 0x7f), "PE header offset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(tc.lib), int64(len(tc.lib)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// FuzzRead: no input makes the reader panic, loop for ever or return
// an arch that is not one.
func FuzzRead(f *testing.F) {
	f.Add(elfLib(container(entry{kindELF, 86, zstd, make([]byte, 40)}, entry{kindPTX, 90, 0x11, []byte(".target sm_90a\n")}), "libcudart.so.12"))
	f.Add(elfLib(container(entry{kindELF, 90, 0x11, cubin(7, 0x85a)})))
	f.Add(peLib(container(entry{kindELF, 61, zstd, make([]byte, 7)}), false, "cudart64_12.dll"))
	f.Add(peLib(container(entry{kindELF, 89, zstd, nil}), true, "cudart64_110.dll"))
	f.Add([]byte("\x7fELF"))
	f.Add([]byte("MZ"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for _, a := range append(k.SASS, k.PTX...) {
			if a.Major < 1 || a.Minor < 0 || a.Minor > 9 {
				t.Fatalf("arch %+v from %q", a, data)
			}
		}
	})
}

// TestManyEmptyContainers: a section of 16 MB of empty 16-byte
// containers (1M of them, no entries) is a malformed library, "too many
// containers", after a few dozen block reads: not a read of 16 bytes each,
// which took seconds and ran into the read timeout ("its file system is
// not answering") on a bigger file. A section of a few thousand empty
// containers is still read, in blocks.
func TestManyEmptyContainers(t *testing.T) {
	empty := container()
	for _, tc := range []struct {
		name      string
		n         int
		err       string
		maxCalls  int
		wantCount int
	}{
		{"16 MB", 1 << 20, "too many containers", 64, 0},
		{"5000", 5000, "", 32, 5000},
		{"one past the cap", maxContainers + 1, "too many containers", 64, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lib := elfLib(bytes.Repeat(empty, tc.n))
			r := &countReads{r: bytes.NewReader(lib)}
			start := time.Now()
			k, err := Read(r, int64(len(lib)))
			took := time.Since(start)
			switch {
			case tc.err != "" && (!errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("err %v, want ErrMalformed saying %q", err, tc.err)
			case tc.err == "" && err != nil:
				t.Errorf("err %v", err)
			case tc.err == "" && k.Containers != tc.wantCount:
				t.Errorf("%d containers, want %d", k.Containers, tc.wantCount)
			}
			if r.calls > tc.maxCalls {
				t.Errorf("%d reads of %d bytes, want at most %d", r.calls, r.bytes, tc.maxCalls)
			}
			t.Logf("%d containers: %d reads, %d bytes, %v", tc.n, r.calls, r.bytes, took)
		})
	}
}

// countReads counts the reads made through it, and their bytes.
type countReads struct {
	r            io.ReaderAt
	calls, bytes int
}

func (c *countReads) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.calls++
	c.bytes += n
	return n, err
}
