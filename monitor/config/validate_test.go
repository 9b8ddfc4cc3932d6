package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/config"
)

// TestBadSettingsAreNamed: a settings file the program would otherwise
// read as something the user did not mean (a typo'd key, NaN that turns
// JOB_ON_CPU off, an index that is not a URL) is an error that names the
// file and what is wrong, and the defaults are used.
func TestBadSettingsAreNamed(t *testing.T) {
	for _, c := range []struct{ toml, want string }{
		{"discover_hom = false\n", "unknown setting discover_hom"},
		{"[cpu]\nfallback = 1\n", "unknown setting cpu"},
		{"cpu_fallback_percent = nan\n", "cpu_fallback_percent NaN"},
		{"cpu_fallback_percent = inf\n", "cpu_fallback_percent +Inf"},
		{"cpu_fallback_percent = 0.0\n", "cpu_fallback_percent 0"},
		{"index_base = \"not a url\"\n", `index_base "not a url"`},
		{"index_base = \"ftp://mirror/whl\"\n", `index_base "ftp://mirror/whl"`},
	} {
		path := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(path, []byte(c.toml), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := config.Load(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%q: err = %v, want it to name %s and say %q", c.toml, err, path, c.want)
		}
		if got.CPUFallbackPercent != config.Default().CPUFallbackPercent || got.IndexBase != config.Default().IndexBase {
			t.Errorf("%q: a bad file was not replaced by the defaults: %+v", c.toml, got)
		}
	}
	good := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(good, []byte("cpu_fallback_percent = 30.0\nindex_base = \"https://mirror.example/whl\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := config.Load(good); err != nil || c.CPUFallbackPercent != 30 {
		t.Errorf("a good file: %+v, %v", c, err)
	}
}
