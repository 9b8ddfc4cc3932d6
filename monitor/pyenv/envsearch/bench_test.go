package envsearch_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// BenchmarkDiscoverHome walks a home of 40 projects with a venv each among
// 400 other folders.
func BenchmarkDiscoverHome(b *testing.B) {
	home := b.TempDir()
	for i := range 40 {
		must(b, pyenvtest.Write(filepath.Join(home, "code", fmt.Sprintf("p%02d", i), ".venv"), pyenvtest.Spec{Manager: "uv"}))
		for j := range 10 {
			must(b, mkdirAll(filepath.Join(home, "code", fmt.Sprintf("p%02d", i), "src", fmt.Sprintf("m%d", j))))
		}
	}
	o := envsearch.Options{Home: home, Cwd: home, System: []string{}, Getenv: func(string) string { return "" }}
	for b.Loop() {
		if got := discover(context.Background(), o); len(got) != 40 {
			b.Fatalf("found %d environments, want 40", len(got))
		}
	}
}
