//go:build windows

package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"
)

// TestWindowsExeResources reads back, through Windows' own calls, the
// resources scripts/winres.sh put into the exes named in GPUCANARY_EXES
// (PATH=gui or PATH=console, comma-separated; scripts/test-windows.sh sets
// it): the version information Explorer's Properties and SmartScreen
// show, the icon, and the manifest (Windows 10 and later, per-monitor DPI
// aware, asInvoker).
func TestWindowsExeResources(t *testing.T) {
	exes := os.Getenv("GPUCANARY_EXES")
	if exes == "" {
		t.Skip("GPUCANARY_EXES names no exe (scripts/test-windows.sh sets it)")
	}
	version := os.Getenv("GPUCANARY_VERSION")
	for _, spec := range strings.Split(exes, ",") {
		path, kind, _ := strings.Cut(spec, "=")
		t.Run(filepath.Base(path), func(t *testing.T) {
			wantFile, wantDesc := "gpucanary.exe", "GPU Canary (command line)"
			if kind == "gui" {
				wantFile, wantDesc = "gpucanaryw.exe", "GPU Canary"
			}
			info := versionInfo(t, path)
			for name, want := range map[string]string{
				"ProductName": "GPU Canary", "FileDescription": wantDesc, "OriginalFilename": wantFile,
				"InternalName": "io.github.gpucanary", "ProductVersion": version, "FileVersion": version,
			} {
				if got := info[name]; got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
			h, err := windows.LoadLibraryEx(path, 0, windows.LOAD_LIBRARY_AS_DATAFILE)
			if err != nil {
				t.Fatalf("loading %s as data: %v", path, err)
			}
			defer windows.FreeLibrary(h)
			manifest := string(resource(t, h, windows.CREATEPROCESS_MANIFEST_RESOURCE_ID, windows.RT_MANIFEST))
			for _, want := range []string{
				`level="asInvoker"`,
				`{8e0f7a12-bfb3-4fe8-b9a5-48fd50a15a9a}`, // supportedOS: Windows 10 and 11
				`>permonitorv2`,
				`>true</longPathAware>`,
			} {
				if !strings.Contains(manifest, want) {
					t.Errorf("the manifest lacks %s:\n%s", want, manifest)
				}
			}
			if strings.Contains(manifest, "{35138b9a-5d96-4fbd-8e2d-a2440225f93a}") {
				t.Errorf("the manifest claims Windows 7 support:\n%s", manifest)
			}
			// GRPICONDIR: reserved, type 1, count; one entry per size.
			group := resource(t, h, windows.ResourceIDOrString("APP"), windows.RT_GROUP_ICON)
			if len(group) < 6 || binary.LittleEndian.Uint16(group[2:]) != 1 {
				t.Fatalf("the icon group is %d bytes, not an icon directory", len(group))
			}
			if n := binary.LittleEndian.Uint16(group[4:]); n != 7 {
				t.Errorf("the icon has %d sizes, want 7 (16 to 256 px)", n)
			}
		})
	}
}

// versionInfo reads the exe's version strings in its first translation.
func versionInfo(t *testing.T, path string) map[string]string {
	t.Helper()
	size, err := windows.GetFileVersionInfoSize(path, nil)
	if err != nil {
		t.Fatalf("%s has no version information: %v", path, err)
	}
	buf := make([]byte, size)
	if err := windows.GetFileVersionInfo(path, 0, size, unsafe.Pointer(&buf[0])); err != nil {
		t.Fatal(err)
	}
	var p unsafe.Pointer
	var n uint32
	if err := windows.VerQueryValue(unsafe.Pointer(&buf[0]), `\VarFileInfo\Translation`, unsafe.Pointer(&p), &n); err != nil || n < 4 {
		t.Fatalf("no translation in the version information: %v", err)
	}
	lang, cp := *(*uint16)(p), *(*uint16)(unsafe.Add(p, 2))
	out := map[string]string{}
	for _, name := range []string{"ProductName", "FileDescription", "OriginalFilename", "InternalName", "ProductVersion", "FileVersion", "LegalCopyright"} {
		if err := windows.VerQueryValue(unsafe.Pointer(&buf[0]), fmt.Sprintf(`\StringFileInfo\%04x%04x\%s`, lang, cp, name), unsafe.Pointer(&p), &n); err == nil && n > 0 {
			out[name] = windows.UTF16PtrToString((*uint16)(p))
		}
	}
	return out
}

func resource(t *testing.T, h windows.Handle, name, typ windows.ResourceIDOrString) []byte {
	t.Helper()
	info, err := windows.FindResource(h, name, typ)
	if err != nil {
		t.Fatalf("no resource %v of type %v: %v", name, typ, err)
	}
	data, err := windows.LoadResourceData(h, info)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
