package gpusim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// TestExamplesParse reads every example as --gpu-sim reads it, and holds
// README.md's table to the files: an example added without its line, or
// a line for a file that is gone, fails.
func TestExamplesParse(t *testing.T) {
	files, err := filepath.Glob("*.json")
	if err != nil || len(files) < 4 {
		t.Fatalf("examples: %v %v", files, err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		st, err := gpu.ReadScenario(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if !st.Simulated {
			t.Errorf("%s: the state does not say it is simulated", f)
		}
		if !strings.Contains(string(readme), "("+f+")") {
			t.Errorf("README.md has no line for %s", f)
		}
	}
	st, err := gpu.ParseScenario(TwoGPUs)
	if err != nil || len(st.Devices) != 2 {
		t.Fatalf("the embedded demo scenario: %d devices, %v", len(st.Devices), err)
	}
}
