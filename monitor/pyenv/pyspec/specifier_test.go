package pyspec_test

import (
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"
)

// TestSatisfies: a version against the specifiers a Requires-Dist line
// gives, and what cannot be read is not known (never a false verdict).
func TestSatisfies(t *testing.T) {
	tests := []struct {
		version, spec string
		ok, known     bool
	}{
		{"12.4.5.8", "", true, true},
		{"12.4.5.8", "==12.4.5.8", true, true},
		{"12.4.5.8", "==12.1.3.1", false, true},
		{"9.1.0.70", ">=9,<10", true, true},
		{"2.6.0rc1", ">=2.6.0rc0", true, true},
		{"not a version", "==1.0", false, false},
		{"1.0", "=>1", false, false},
	}
	for _, tt := range tests {
		ok, known := pyspec.Satisfies(tt.version, tt.spec)
		if ok != tt.ok || known != tt.known {
			t.Errorf("Satisfies(%q, %q) = %v, %v; want %v, %v", tt.version, tt.spec, ok, known, tt.ok, tt.known)
		}
	}
}
