package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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
		// A notify list limits notifications to the kinds it names: one
		// that names none would silence every notification.
		{"notify = [\"cuda_wheel_replaced\"]\n", `notify "cuda_wheel_replaced" is not a kind of event GPU Canary notifies about (kinds are written in capitals: CUDA_WHEEL_REPLACED)`},
		{"notify = [\"BOGUS\"]\n", `notify "BOGUS" is not a kind of event GPU Canary notifies about; the kinds are CUDA_WHEEL_REPLACED, TORCH_CHANGED,`},
		{"notify = [\"JOB_ON_CPU\", \"CUDA_WHEEL_REPLACE\"]\n", `notify "CUDA_WHEEL_REPLACE"`},
		{"notify = [\"ENV_ADDED\"]\n", `notify "ENV_ADDED"`}, // a kind that is shown in the history only
		{"notify = [\"none\"]\n", `(kinds are written in capitals: NONE)`},
		{"stall_window = \"10ms\"\n", "stall_window 10ms is shorter than 100ms"},
		{"stall_arm_after = \"0s\"\n", "stall_arm_after 0s must be above 0"},
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
	if err := os.WriteFile(good, []byte("cpu_fallback_percent = 30.0\nindex_base = \"https://mirror.example/whl\"\nstall_window = \"2s\"\nstall_arm_after = \"500ms\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := config.Load(good); err != nil || c.CPUFallbackPercent != 30 || c.StallWindow.Duration != 2*time.Second || c.StallArmAfter.Duration != 500*time.Millisecond {
		t.Errorf("a good file: %+v, %v", c, err)
	}
}

// TestNotifyTakesEveryKind: every kind the policy can tell, and NONE
// (which Settings writes when every kind is unticked), is read as written.
func TestNotifyTakesEveryKind(t *testing.T) {
	for _, list := range [][]string{config.NotifyKinds, {config.NotifyNone}, {"JOB_ON_CPU"}} {
		path := filepath.Join(t.TempDir(), "config.toml")
		c := config.Default()
		c.Notify = list
		if err := config.Save(path, c); err != nil {
			t.Fatalf("saving notify = %v: %v", list, err)
		}
		got, err := config.Load(path)
		if err != nil || !slices.Equal(got.Notify, list) {
			t.Errorf("notify = %v read back as %v, %v", list, got.Notify, err)
		}
	}
	bad := config.Default()
	bad.Notify = []string{"cuda_wheel_replaced"}
	if err := config.Save(filepath.Join(t.TempDir(), "config.toml"), bad); err == nil {
		t.Error("Save wrote a notify kind that does not exist")
	}
}

// TestUnknownSettingListsTheKeys: a typo'd key is answered with the keys
// there are.
func TestUnknownSettingListsTheKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte("discover_hom = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := config.Load(path)
	if err == nil || !strings.Contains(err.Error(), strings.Join(config.Keys(), ", ")) || !strings.Contains(err.Error(), "discover_home") {
		t.Errorf("err = %v, want it to list the settings", err)
	}
}

// TestByteOrderMarkIsRead: Notepad writes a UTF-8 file with a byte-order
// mark first; the settings in it are read, not refused (issue 32, L15).
func TestByteOrderMarkIsRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte("\ufeffcpu_fallback_percent = 30.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := config.Load(path); err != nil || c.CPUFallbackPercent != 30 {
		t.Errorf("a file with a byte-order mark: %+v, %v", c, err)
	}
}
