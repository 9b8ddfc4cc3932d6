package kb

import (
	"strings"
	"testing"
)

func TestVariantOffered(t *testing.T) {
	tests := []struct {
		torch, tag string
		want       Support
		reason     string
	}{
		{"2.5.1", "cu124", SupportYes, ""},
		{"2.5.1+cpu", "cu118", SupportYes, ""},
		// Issue 16 point 3: no cu128 wheel of 2.5.1; cu999 is no CUDA.
		{"2.5.1", "cu128", SupportNo, "pytorch.org has no cu128 build of torch 2.5.1: its CUDA variants are cu118, cu121, cu124"},
		{"2.5.1", "cu999", SupportNo, "no cu999 build"},
		{"2.5.1", "cpu", SupportNo, "not a CUDA variant"},
		{"2.5.1", "rocm6.2", SupportNo, "not a CUDA variant"},
		{"2.5.1", "", SupportNo, "not a CUDA variant"},
		{"1.11.0", "cu115", SupportUnknown, "not verified"},
		{"2.16.0", "cu130", SupportUnknown, "newer than GPU Canary's release table"},
		{"2.16.0", "cu134", SupportUnknown, "newer than every CUDA version"},
		{"2.16.0", "cu140", SupportUnknown, "newer than every CUDA version"},
		{"2.16.0", "cu999", SupportNo, "no torch release is built for CUDA 99.9"},
		{"2.16.0", "cu125", SupportNo, "no torch release is built for CUDA 12.5"},
		{"garbage", "cu124", SupportUnknown, "cannot be read"},
	}
	for _, tt := range tests {
		t.Run(tt.torch+" "+tt.tag, func(t *testing.T) {
			got, why := VariantOffered(tt.torch, tt.tag)
			if got != tt.want || why == "" || !strings.Contains(why, tt.reason) {
				t.Errorf("VariantOffered = %s, %q", got, why)
			}
		})
	}
}
