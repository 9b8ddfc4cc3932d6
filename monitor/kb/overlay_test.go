package kb

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// useTables makes t the tables every answer reads, for one test.
func useTables(tb testing.TB, t *tables) {
	tb.Helper()
	facts() // the once has run: loaded is what is swapped
	old := loaded
	loaded = t
	tb.Cleanup(func() { loaded = old })
}

// release299 is an overlay naming a torch 2.99 with 2.15's rows copied,
// as `gpucanary kb --json` prints them.
func release299(tb testing.TB) []byte {
	tb.Helper()
	s := Snap()
	var o struct {
		Releases []releaseRow `json:"releases"`
		Arches   []archRow    `json:"arches"`
	}
	r := s.Releases[len(s.Releases)-1]
	r.Minor, r.Patches, r.Source = "2.99", []string{"2.99.0"}, "a test overlay"
	o.Releases = append(o.Releases, r)
	for _, a := range s.Arches {
		for _, m := range a.Minors {
			if m == "2.15" {
				a.Minors = []string{"2.99"}
				o.Arches = append(o.Arches, a)
				break
			}
		}
	}
	b, err := json.MarshalIndent(o, "", " ")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestOverlayTeachesARelease(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "10-release.json")
	broken := filepath.Join(dir, "20-broken.json")
	invalid := filepath.Join(dir, "30-invalid.json")
	typo := filepath.Join(dir, "40-typo.json")
	for path, data := range map[string]string{
		good:    string(release299(t)),
		broken:  `{"releases": [`,
		invalid: `{"releases": [{"minor": "2.98", "patches": ["2.98.0"], "tags": ["cu132"], "pypi_linux_cuda": "13.2"}]}`, // no source
		typo:    `{"relases": []}`,
	} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(dir, "gone.json")
	tb := withOverlays(embeddedTables(), []string{good, broken, invalid, typo, missing})
	useTables(t, tb)

	if !Known("2.99.0+cu132") || Known("2.98.0") {
		t.Fatalf("Known(2.99) = %v, Known(2.98) = %v", Known("2.99.0"), Known("2.98.0"))
	}
	m := machine("13.2", "6.1")
	if c := CheckBuild("2.99.0+cu132", "13.2", m); !c.ReleaseKnown || c.Inferred != "" || len(c.Unsupported()) != 1 {
		t.Errorf("2.99 cu132 on a GTX 1080 Ti: %+v", c)
	}
	if s := Snap(); s.Newest.Minor != "2.99" {
		t.Errorf("newest %q, want 2.99", s.Newest.Minor)
	}
	got := Overlays()
	if len(got) != 5 || got[0].Path != good || got[0].Error != "" || got[0].Rows == 0 {
		t.Fatalf("overlays %+v", got)
	}
	for i, want := range []string{"unexpected EOF", "missing source", "unknown field", "no such file"} {
		if o := got[i+1]; !strings.Contains(o.Error, want) || !strings.Contains(o.Error, o.Path) {
			t.Errorf("overlay %s: error %q, want one naming the file and %q", o.Path, o.Error, want)
		}
	}
	if w := OverlayWarnings(); len(w) != 4 || !strings.Contains(w[0], broken) {
		t.Errorf("warnings %q", w)
	}
	// What the embedded data said is still there.
	if !Known("2.15.0") || AsOf() != "2026-11-26" {
		t.Error("an overlay lost the embedded data")
	}
}

func TestOverlayRowsOverrideByKey(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "a.json")
	second := filepath.Join(dir, "b.json")
	os.WriteFile(first, []byte(`{"arches": [{"minors": ["2.14"], "tag": "cu126", "sass": ["6.1"], "source": "first"}],
		"drivers": [{"cuda": "13.2", "linux_minor": "580", "windows_minor": "580", "linux_full": "596.1", "windows_na": true, "source": "first"}]}`), 0o644)
	os.WriteFile(second, []byte(`{"arches": [{"minors": ["2.14"], "tag": "cu126", "sass": ["5.0", "6.0"], "source": "second"}]}`), 0o644)
	useTables(t, withOverlays(embeddedTables(), []string{first, second}))
	if a, ok := archListFor("2.14.0", "cu126"); !ok || a.Source != "second" {
		t.Errorf("2.14 cu126 = %+v: the later row should win", a)
	}
	// The row it replaced still covers its other releases.
	if a, ok := archListFor("2.13.0", "cu126"); !ok || a.Source == "second" || a.Source == "first" {
		t.Errorf("2.13 cu126 = %+v", a)
	}
	if f, _ := DriverFloorFor("13.2", "linux"); f.Full != "596.1" {
		t.Errorf("13.2 floor %+v", f)
	}
}

// An overlay that would make the tables inconsistent (a driver floor out
// of order) is refused whole.
func TestOverlayThatBreaksTheTablesIsIgnored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(path, []byte(`{"drivers": [{"cuda": "13.2", "linux_minor": "580", "windows_minor": "580", "linux_full": "500.1", "windows_na": true, "source": "x"}]}`), 0o644)
	useTables(t, withOverlays(embeddedTables(), []string{path}))
	if f, _ := DriverFloorFor("13.2", "linux"); f.Full != "595.45.04" {
		t.Errorf("13.2 floor %+v", f)
	}
	if w := OverlayWarnings(); len(w) != 1 || !strings.Contains(w[0], "not after") {
		t.Errorf("warnings %q", w)
	}
}

func TestOverlayPathsFollowXDG(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("XDG_CONFIG_HOME is not where Windows keeps settings")
	}
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	d := filepath.Join(cfg, "gpucanary", "kb.d")
	os.MkdirAll(d, 0o755)
	os.WriteFile(filepath.Join(d, "b.json"), []byte("{}"), 0o644) // no rows: read, harmless
	os.WriteFile(filepath.Join(d, "a.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(d, "notes.txt"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(cfg, "gpucanary", "kb-refresh.json"), []byte("{}"), 0o644)
	got := OverlayPaths()
	var mine []string
	for _, p := range got {
		if strings.HasPrefix(p, cfg) {
			mine = append(mine, strings.TrimPrefix(p, cfg))
		}
	}
	want := []string{"/gpucanary/kb-refresh.json", "/gpucanary/kb.d/a.json", "/gpucanary/kb.d/b.json"}
	if strings.Join(mine, " ") != strings.Join(want, " ") {
		t.Errorf("OverlayPaths = %q, want %q", mine, want)
	}
}
