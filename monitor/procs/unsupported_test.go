//go:build !linux && !windows

package procs

import (
	"context"
	"strings"
	"testing"
)

// TestUnsupportedSaysSo: where no scanner is written, Scan says so rather
// than list no processes, which would read as "nothing runs".
func TestUnsupportedSaysSo(t *testing.T) {
	ps, err := NewSource(Options{}).Scan(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not supported on this platform") || ps != nil {
		t.Fatalf("Scan = %v, %v", ps, err)
	}
	if got := NewSource(Options{}).Installer(context.Background(), "/env"); got != nil {
		t.Errorf("Installer = %+v", got)
	}
}
