package main

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
)

func TestParseReport(t *testing.T) {
	tests := []struct {
		name, text string
		want       []Library
		wantErr    bool
	}{
		{"two libraries", "fyne.io/fyne/v2\tv2.7.2\tBSD-3-Clause\ngithub.com/x/y\tv0.1.0\tMIT\n",
			[]Library{{"fyne.io/fyne/v2", "v2.7.2", "BSD-3-Clause"}, {"github.com/x/y", "v0.1.0", "MIT"}}, false},
		{"an unnamed licence", "github.com/x/y\tv0.1.0\tUnknown\n", nil, true},
		{"a malformed line", "github.com/x/y v0.1.0 MIT\n", nil, true},
		{"nothing", "\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseReport([]byte(tt.text))
			if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, %v; want %v (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestNearbyLicences(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{
		"LICENSE", "LICENSE-writer", "code.go",
		"font/LICENSE_Inter.txt", "font/Inter.ttf", // embedded assets: no Go package
		"glfw/src/COPYING.md",       // C sources compiled by cgo
		"sub/pkg.go", "sub/LICENSE", // another package: listed on its own
		"testdata/LICENSE", ".git/LICENSE",
	} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := nearbyLicences(dir)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	want := []string{"LICENSE", "LICENSE-writer", "font/LICENSE_Inter.txt", "glfw/src/COPYING.md"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSavedFor(t *testing.T) {
	out := t.TempDir()
	lib := filepath.Join(out, "github.com", "NVIDIA", "go-nvml", "pkg")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lib, "LICENSE"), []byte("apache"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		pkg, text string
		want      bool
	}{
		{"github.com/NVIDIA/go-nvml/pkg/nvml", "apache", true}, // saved for the library above the package
		{"github.com/NVIDIA/go-nvml/pkg/nvml", "other", false},
		{"github.com/other/x", "apache", false},
	} {
		got, err := savedFor(out, tt.pkg, []byte(tt.text))
		if err != nil || got != tt.want {
			t.Errorf("savedFor(%s, %q) = %v, %v; want %v", tt.pkg, tt.text, got, err, tt.want)
		}
	}
}
