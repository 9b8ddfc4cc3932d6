package kb

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLearnFromIndex(t *testing.T) {
	wheels := []Wheel{
		{"2.16.0+cu130", PlatformLinuxX86}, {"2.16.0+cu130", PlatformLinuxARM}, {"2.16.0+cu130", PlatformWindows},
		{"2.16.0+cu132", PlatformLinuxX86},
		{"2.16.0", ""}, // macOS: a patch release, no CUDA tag
		{"2.16.0+cpu", PlatformLinuxX86},
		{"2.15.1+cu132", PlatformLinuxX86},
		{"2.15.0+cu126", PlatformLinuxX86},
		{"2.14.0+cu132", PlatformLinuxX86},                     // nothing new
		{"2.17.0.dev20261120+cu132", PlatformLinuxX86},         // a nightly teaches nothing
		{"2.18.0+cpu", PlatformLinuxX86},                       // no CUDA wheels: no row
		{"2.16.0a0+gitabc", PlatformLinuxX86}, {"garbage", ""}, // nor odd builds
	}
	l, err := LearnFromIndex(wheels, "https://index.example/whl on 2026-11-26")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(l.News, " | "); got != "torch 2.15: 2.15.1, cu126 | torch 2.16 (2.16.0): cu130, cu132" {
		t.Errorf("News = %q", got)
	}
	path := filepath.Join(t.TempDir(), "kb-refresh.json")
	if err := os.WriteFile(path, l.Overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	useTables(t, withOverlays(embeddedTables(), []string{path}))
	if w := OverlayWarnings(); len(w) > 0 {
		t.Fatalf("the learned overlay is refused: %q\n%s", w, l.Overlay)
	}
	if vs, _ := variants("2.16.0"); !slices.Equal(vs, []string{"cu130", "cu132"}) {
		t.Errorf("2.16's variants %v", vs)
	}
	if vs, _ := variants("2.15.1"); !slices.Equal(vs, []string{"cu126", "cu130", "cu132"}) {
		t.Errorf("2.15's variants %v", vs)
	}
	// Known now, and judged by inferred arch lists: 2.16 cu132 by 2.15's,
	// 2.15 cu126 by 2.14's.
	x86 := machine("13.2", "6.1")
	if c := CheckBuild("2.16.0+cu132", "13.2", x86); !c.ReleaseKnown || c.InferredFrom != "2.15" || len(c.Unsupported()) != 1 {
		t.Errorf("2.16 cu132: %+v", c)
	}
	if c := CheckBuild("2.15.1+cu126", "12.6", x86); c.InferredFrom != "2.14" || !c.Clean() {
		t.Errorf("2.15 cu126: %+v", c)
	}
	// cu132 of 2.16 has no aarch64 wheel: a Thor gets cu130.
	arm := machine("13.2", "11.0")
	arm.wheel = PlatformLinuxARM
	if c, ok := ChooseVariant("2.16.0", arm); !ok || c.Tag != "cu130" || !strings.Contains(c.Reason, "cu132 has no linux-aarch64 wheels") {
		t.Errorf("ChooseVariant on aarch64 = %+v, %v", c, ok)
	}
	// Nothing new: an overlay without rows, which replaces the last.
	l, err = LearnFromIndex([]Wheel{{"2.14.0+cu132", PlatformLinuxX86}}, "x")
	if err != nil || len(l.News) > 0 || strings.Contains(string(l.Overlay), "2.14") {
		t.Errorf("LearnFromIndex of what is known = %s, %q, %v", l.Overlay, l.News, err)
	}
	os.WriteFile(path, l.Overlay, 0o644)
	useTables(t, withOverlays(embeddedTables(), []string{path}))
	if w := OverlayWarnings(); len(w) > 0 || Known("2.16.0") {
		t.Errorf("an empty refresh overlay: %q, 2.16 known %v", w, Known("2.16.0"))
	}
}
