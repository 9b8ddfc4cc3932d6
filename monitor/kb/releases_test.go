package kb

import (
	"slices"
	"testing"
)

func TestReleases(t *testing.T) {
	tests := []struct {
		torch, vision, audio string
		variants             []string
		linux                string
	}{
		{"1.9.1", "0.10.1", "0.9.1", []string{"cu102", "cu111"}, "10.2"},
		{"1.10.0+cu113", "0.11.0", "0.10.0", []string{"cu102", "cu111", "cu113"}, "10.2"},
		{"1.12.1", "0.13.1", "0.12.1", []string{"cu102", "cu113", "cu116"}, "10.2"},
		{"1.13.0", "0.14.0", "0.13.0", []string{"cu116", "cu117"}, "11.7"},
		{"1.13.1", "0.14.1", "0.13.1", []string{"cu116", "cu117"}, "11.7"},
		{"2.0.0", "0.15.1", "2.0.1", []string{"cu117", "cu118"}, "11.7"},
		{"2.0.1", "0.15.2", "2.0.2", []string{"cu117", "cu118"}, "11.7"},
		{"2.1.2", "0.16.2", "2.1.2", []string{"cu118", "cu121"}, "12.1"},
		{"2.2.0", "0.17.0", "2.2.0", []string{"cu118", "cu121"}, "12.1"},
		{"2.3.1", "0.18.1", "2.3.1", []string{"cu118", "cu121"}, "12.1"},
		{"2.4.1", "0.19.1", "2.4.1", []string{"cu118", "cu121", "cu124"}, "12.1"},
		{"2.5.1", "0.20.1", "2.5.1", []string{"cu118", "cu121", "cu124"}, "12.4"},
		{"2.5.1+cu121", "0.20.1", "2.5.1", []string{"cu118", "cu121", "cu124"}, "12.4"},
		{"2.5.0a0+git32f585d", "0.20.0", "2.5.0", []string{"cu118", "cu121", "cu124"}, "12.4"},
		{"2.6.0", "0.21.0", "2.6.0", []string{"cu118", "cu124", "cu126"}, "12.4"},
		{"2.7.0", "0.22.0", "2.7.0", []string{"cu118", "cu126", "cu128"}, "12.6"},
		{"2.7.1", "0.22.1", "2.7.1", []string{"cu118", "cu126", "cu128"}, "12.6"},
		{"2.8.0", "0.23.0", "2.8.0", []string{"cu126", "cu128", "cu129"}, "12.8"},
		{"2.9.1", "0.24.1", "2.9.1", []string{"cu126", "cu128", "cu130"}, "12.8"},
		{"2.10.0.dev20251001+cu128", "0.25.0", "2.10.0", []string{"cu126", "cu128", "cu130"}, "12.8"},
		{"2.11.0", "0.26.0", "2.11.0", []string{"cu126", "cu128", "cu130"}, "13.0"},
	}
	for _, tt := range tests {
		t.Run(tt.torch, func(t *testing.T) {
			if !Known(tt.torch) {
				t.Error("not Known")
			}
			v, a, ok := Companions(tt.torch)
			if !ok || v != tt.vision || a != tt.audio {
				t.Errorf("Companions = %q, %q, %v; want %q, %q", v, a, ok, tt.vision, tt.audio)
			}
			vs, ok := variants(tt.torch)
			if !ok || !slices.Equal(vs, tt.variants) {
				t.Errorf("Variants = %v, %v; want %v", vs, ok, tt.variants)
			}
			if c, ok := DefaultCUDA(tt.torch, "linux"); !ok || c != tt.linux {
				t.Errorf("DefaultCUDA linux = %q, %v; want %q", c, ok, tt.linux)
			}
			for _, p := range []string{"windows", "darwin"} {
				if c, ok := DefaultCUDA(tt.torch, p); !ok || c != "" {
					t.Errorf("DefaultCUDA %s = %q, %v; want CPU-only", p, c, ok)
				}
			}
			if _, ok := DefaultCUDA(tt.torch, "plan9"); ok {
				t.Error("DefaultCUDA answers for an unknown platform")
			}
		})
	}
}

// TestOldReleases: releases before 1.9 are judged (variants, PyPI CUDA)
// but their companions are not written down, so no companion is called
// wrong for them.
func TestOldReleases(t *testing.T) {
	tests := []struct {
		torch    string
		variants []string
		linux    string
	}{
		{"1.0.1", []string{"cu80", "cu90", "cu100"}, "9.0"},
		{"1.2.0", []string{"cu92", "cu100"}, "10.0"},
		{"1.3.1", []string{"cu92", "cu101"}, "10.1"},
		{"1.4.0", []string{"cu92", "cu101"}, "10.1"},
		{"1.7.1+cu110", []string{"cu92", "cu101", "cu102", "cu110"}, "10.2"},
		{"1.8.1", []string{"cu101", "cu102", "cu111"}, "10.2"},
	}
	for _, tt := range tests {
		t.Run(tt.torch, func(t *testing.T) {
			if !Known(tt.torch) {
				t.Error("not Known")
			}
			if vs, ok := variants(tt.torch); !ok || !slices.Equal(vs, tt.variants) {
				t.Errorf("Variants = %v, %v; want %v", vs, ok, tt.variants)
			}
			if c, ok := DefaultCUDA(tt.torch, "linux"); !ok || c != tt.linux {
				t.Errorf("DefaultCUDA linux = %q, %v; want %q", c, ok, tt.linux)
			}
			if v, a, ok := Companions(tt.torch); ok {
				t.Errorf("Companions = %q, %q for a release whose companions are not written down", v, a)
			}
		})
	}
}

func TestUnknownReleases(t *testing.T) {
	for _, v := range []string{"2.16.0", "2.16.0.dev20261201+cu130", "3.0.0", "0.4.1", "garbage", ""} {
		t.Run(v, func(t *testing.T) {
			if Known(v) {
				t.Error("Known")
			}
			if _, _, ok := Companions(v); ok {
				t.Error("Companions ok")
			}
			if _, ok := variants(v); ok {
				t.Error("Variants ok")
			}
			if _, ok := DefaultCUDA(v, "linux"); ok {
				t.Error("DefaultCUDA linux ok")
			}
			if _, ok := DefaultCUDA(v, "windows"); ok {
				t.Error("DefaultCUDA windows ok")
			}
			if _, ok := ReleaseFor(v); ok {
				t.Error("ReleaseFor ok")
			}
		})
	}
}

func TestReleasesOrderAndCopies(t *testing.T) {
	rs := Releases()
	if rs[0].Minor != "1.0" || rs[len(rs)-1].Minor != "2.15" {
		t.Fatalf("Releases from %s to %s, want 1.0 to 2.15", rs[0].Minor, rs[len(rs)-1].Minor)
	}
	// Callers get copies: changing one must not change the table.
	rs[0].Tags[0] = "cu999"
	vs, _ := variants("1.13.1")
	vs[1] = "cu998"
	if vs, _ := variants("1.13.1"); vs[0] != "cu116" || vs[1] != "cu117" {
		t.Errorf("the table was changed through a returned slice: %v", vs)
	}
}

// variants returns the CUDA index tags download.pytorch.org offers for a
// torch version, oldest CUDA first, so a repair can pick one; the local tag
// of the version is ignored. ok is false when the release is not in the table.
func variants(torchVersion string) ([]string, bool) {
	r, _, ok := releaseOf(torchVersion)
	if !ok {
		return nil, false
	}
	return slices.Clone(r.Tags), true
}
