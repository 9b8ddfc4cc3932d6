// Package config holds GPU Canary's settings: one TOML file shared by the
// tray and the command line, so that what the tray remembers (roots, extra
// environments, the index mirror) is what `check` and `watch` use.
//
// A missing file is the defaults. A malformed one is reported and the
// defaults are used: a broken config never stops the program.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// Config is every setting, with its default from Default.
type Config struct {
	// Roots are extra folders searched for environments, besides home.
	Roots []string `toml:"roots"`
	// Envs are environments added by hand; always checked.
	Envs []string `toml:"envs"`
	// IndexBase is the PyTorch wheel index base (a mirror may stand in).
	IndexBase string `toml:"index_base"`
	// LlamaIndexBase is the base of llama-cpp-python's CUDA wheel
	// indexes (BASE/cu124; a mirror may stand in).
	LlamaIndexBase string `toml:"llama_index_base"`
	// Refresh is how often processes and the GPU are polled.
	Refresh Duration `toml:"refresh"`
	// CPUFallbackPercent and CPUFallbackWindow decide when a busy process
	// on the CPU becomes JOB_ON_CPU.
	CPUFallbackPercent float64  `toml:"cpu_fallback_percent"`
	CPUFallbackWindow  Duration `toml:"cpu_fallback_window"`
	// Notify lists the event kinds that become notifications (NotifyKinds);
	// empty = all, ["NONE"] = none.
	Notify []string `toml:"notify"`
	// DiscoverHome turns the walk of the home directory on or off.
	DiscoverHome bool `toml:"discover_home"`
	// KBRefresh lets the engine (tray, watch, agent) read the wheel index
	// at IndexBase at most daily and learn newer torch releases
	// (`gpucanary kb refresh`); off, nothing is read unless asked.
	KBRefresh bool `toml:"kb_refresh"`
	// ThrottleWindow, PCIeWindow and XidHold are the GPU health rules'
	// windows (monitor/health's GPUWatchOptions): GPU_THROTTLED and PCIe
	// replays are measured over ThrottleWindow, a link must stay low
	// under load for PCIeWindow, and GPU_XID stays raised XidHold after
	// the last Xid.
	ThrottleWindow Duration `toml:"throttle_window"`
	PCIeWindow     Duration `toml:"pcie_window"`
	XidHold        Duration `toml:"xid_hold"`
	// SpillWindow is how long a job must spill into system memory,
	// growing, to be VRAM_SPILL (Windows); DRIVER_RESET stays raised
	// XidHold after the last reset.
	SpillWindow Duration `toml:"spill_window"`
	// JobMinRuntime is how long a GPU job must have run for its end to
	// be told (JOB_ENDED); a job one asked to be told of is told
	// whatever its run time.
	JobMinRuntime Duration `toml:"job_min_runtime"`
	// StallWindow is how long a job's GPU must stay idle while the job
	// holds its memory, or spin at a fraction of its power limit, to be
	// told (JOB_STALLED, JOB_SPINNING); StallArmAfter is how long the
	// job must have computed first, so that a notebook or a server idle
	// by design is never told.
	StallWindow   Duration `toml:"stall_window"`
	StallArmAfter Duration `toml:"stall_arm_after"`
}

// Duration is a time.Duration written as "2s" in TOML.
type Duration struct{ time.Duration }

// MarshalText writes "2s".
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads "2s", "500ms".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("reading duration %q: %w", b, err)
	}
	d.Duration = v
	return nil
}

// Default is the configuration with nothing set.
func Default() Config {
	return Config{
		IndexBase:          "https://download.pytorch.org/whl",
		LlamaIndexBase:     "https://abetlen.github.io/llama-cpp-python/whl",
		Refresh:            Duration{2 * time.Second},
		CPUFallbackPercent: 50,
		CPUFallbackWindow:  Duration{20 * time.Second},
		DiscoverHome:       true,
		ThrottleWindow:     Duration{60 * time.Second},
		PCIeWindow:         Duration{30 * time.Second},
		XidHold:            Duration{10 * time.Minute},
		SpillWindow:        Duration{60 * time.Second},
		JobMinRuntime:      Duration{5 * time.Minute},
		StallWindow:        Duration{10 * time.Minute},
		StallArmAfter:      Duration{5 * time.Minute},
	}
}

// Path is the config file's location: $XDG_CONFIG_HOME/gpucanary/config.toml
// (os.UserConfigDir, so %AppData% on Windows).
func Path() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the config directory: %w", err)
	}
	return filepath.Join(dir, "gpucanary", "config.toml"), nil
}

// Load reads the file at path over the defaults. A missing file is the
// defaults and no error; a malformed file returns the defaults and an error
// that says what is wrong, for the caller to show.
func Load(path string) (Config, error) {
	c := Default()
	data, err := safefs.ReadFile(path, 4<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("reading settings %s: %w", path, err)
	}
	// Notepad starts a UTF-8 file with a byte-order mark, which TOML
	// does not allow: it says nothing, so it is dropped.
	data = bytes.TrimPrefix(data, utf8BOM)
	read := c
	// A key the program does not know is most often a typo
	// ("discover_hom"): ignored, the setting the user meant would silently
	// be its default.
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&read); err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) {
			return c, fmt.Errorf("reading settings %s: %s", path, unknownKeys(strict))
		}
		return c, fmt.Errorf("reading settings %s: %w", path, err)
	}
	if err := read.validate(); err != nil {
		return c, fmt.Errorf("reading settings %s: %w", path, err)
	}
	return read, nil
}

// utf8BOM is the byte-order mark some editors write at the start of a
// UTF-8 file.
var utf8BOM = []byte("\ufeff")

func (c Config) validate() error {
	switch {
	case c.Refresh.Duration < 100*time.Millisecond:
		return fmt.Errorf("refresh %s is shorter than 100ms", c.Refresh)
	case !(c.CPUFallbackPercent > 0) || math.IsInf(c.CPUFallbackPercent, 0):
		// !(x > 0) is also true of NaN, which would turn JOB_ON_CPU off.
		return fmt.Errorf("cpu_fallback_percent %v must be a number above 0", c.CPUFallbackPercent)
	case c.CPUFallbackWindow.Duration < 0:
		return fmt.Errorf("cpu_fallback_window %s is negative", c.CPUFallbackWindow)
	case c.ThrottleWindow.Duration < 100*time.Millisecond:
		return fmt.Errorf("throttle_window %s is shorter than 100ms", c.ThrottleWindow)
	case c.PCIeWindow.Duration < 0:
		return fmt.Errorf("pcie_window %s is negative", c.PCIeWindow)
	case c.XidHold.Duration < 100*time.Millisecond:
		return fmt.Errorf("xid_hold %s is shorter than 100ms", c.XidHold)
	case c.SpillWindow.Duration < 100*time.Millisecond:
		return fmt.Errorf("spill_window %s is shorter than 100ms", c.SpillWindow)
	case c.JobMinRuntime.Duration <= 0:
		return fmt.Errorf("job_min_runtime %s must be above 0", c.JobMinRuntime)
	case c.StallWindow.Duration < 100*time.Millisecond:
		return fmt.Errorf("stall_window %s is shorter than 100ms", c.StallWindow)
	case c.StallArmAfter.Duration <= 0:
		return fmt.Errorf("stall_arm_after %s must be above 0", c.StallArmAfter)
	case c.IndexBase == "":
		return errors.New("index_base is empty")
	case c.LlamaIndexBase == "":
		return errors.New("llama_index_base is empty")
	}
	if err := CheckIndexBase(c.IndexBase); err != nil {
		return fmt.Errorf("index_base %w", err)
	}
	if err := CheckIndexBase(c.LlamaIndexBase); err != nil {
		return fmt.Errorf("llama_index_base %w", err)
	}
	return checkNotify(c.Notify)
}

// CheckIndexBase says what is wrong with base as a PyTorch index base (a
// mirror), or nil: an http(s) URL with a host, or a file URL. It is the
// one check of the settings file's index_base and of `fix --index-base`,
// so a value one refuses the other does not turn into a nonsense
// command (a newline, "-rf", "ftp://…", "http://[::1").
func CheckIndexBase(base string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "file") || (u.Host == "" && u.Scheme != "file") {
		return fmt.Errorf("%q is not an http(s) or file URL", base)
	}
	return nil
}

// unknownKeys names the keys of a settings file that no setting has.
func unknownKeys(e *toml.StrictMissingError) string {
	keys := make([]string, len(e.Errors))
	for i, d := range e.Errors {
		keys[i] = strings.Join(d.Key(), ".")
	}
	return fmt.Sprintf("unknown setting %s (a typo? the settings are %s; docs/guide.md, \"Settings\", says what each does)",
		strings.Join(keys, ", "), strings.Join(Keys(), ", "))
}

// Keys are the settings' names as the file writes them, in Config's
// order.
func Keys() []string {
	t := reflect.TypeFor[Config]()
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ","); k != "" && k != "-" {
			keys = append(keys, k)
		}
	}
	return keys
}

// Save writes c to path atomically (temp file + rename), creating the folder.
func Save(path string, c Config) error {
	if err := c.validate(); err != nil {
		return fmt.Errorf("saving settings %s: %w", path, err)
	}
	data, err := toml.Marshal(c)
	if err != nil {
		return fmt.Errorf("saving settings %s: %w", path, err)
	}
	// The settings may hold an index URL with credentials: only the user
	// reads them, and GPU Canary's own settings folder is private too.
	if def, err := Path(); err == nil && filepath.Dir(def) == filepath.Dir(path) {
		if err := PrivateDir(filepath.Dir(path)); err != nil {
			return fmt.Errorf("saving settings %s: %w", path, err)
		}
	}
	return WriteAtomic(path, data, 0o600)
}

// PrivateDir makes dir, a folder of GPU Canary's own (its settings or
// state folder), readable by the user alone: created 0700, or tightened
// to 0700 when an older version made it 0755. It holds command lines of
// the user's processes and may hold an index URL with credentials.
func PrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("making %s private: %w", dir, err)
		}
	}
	return nil
}
