package pyenv

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gpucanary/gpucanary/monitor/fstrace"
)

// TestWatchedReadMarksUnsure: a read cut short by an I/O error marks the
// trace unsure (the file's stamp would not change when the error goes);
// a read to the end does not.
func TestWatchedReadMarksUnsure(t *testing.T) {
	for _, tc := range []struct {
		name   string
		r      io.Reader
		unsure bool
	}{
		{"to the end", strings.NewReader("Name: torch\n"), false},
		{"an I/O error", iotest.ErrReader(errors.New("input/output error")), true},
		{"an error after some bytes", io.MultiReader(strings.NewReader("Name: torch\n"), iotest.ErrReader(errors.New("input/output error"))), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := fstrace.New()
			io.ReadAll(watched(tr, "/env/METADATA", tc.r))
			if got := tr.Unsure() != ""; got != tc.unsure {
				t.Errorf("unsure = %v (%q), want %v", got, tr.Unsure(), tc.unsure)
			}
		})
	}
	if r := strings.NewReader(""); watched(nil, "x", r) != io.Reader(r) {
		t.Error("without a trace the reader is not the file's own")
	}
}
