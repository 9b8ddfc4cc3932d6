package kb

import (
	"fmt"
	"regexp"
	"slices"
	"sync"
)

// The tables are built as Go at build time from data/*.json: after an
// edit of the JSON, `go generate ./monitor/kb` writes tables_gen.go again.
//go:generate go test -run ^TestGeneratedTables$ -update-tables .

// companionPair is the torchvision and torchaudio of one torch patch
// release, written down where they deviate from the rules.
type companionPair struct {
	Vision string `json:"vision"`
	Audio  string `json:"audio"`
}

// releaseRow is one torch minor release (data/releases.json).
type releaseRow struct {
	Minor          string   `json:"minor"`
	Patches        []string `json:"patches"`
	Tags           []string `json:"tags"`
	PyPILinuxCUDA  string   `json:"pypi_linux_cuda"`
	PyPIUnverified bool     `json:"pypi_unverified,omitempty"`
	// TagsUnverified are tags not read from pytorch.org's own pages.
	TagsUnverified []string `json:"tags_unverified,omitempty"`
	// TagPlatforms are the wheel platforms (linux-x86_64, linux-aarch64,
	// windows-x86_64) each tag has wheels for, where they were read
	// from the index (gpucanary kb refresh); a tag missing here is taken
	// to have wheels for every platform.
	TagPlatforms map[string][]string `json:"tag_platforms,omitempty"`
	// JudgeOnly marks a release whose builds are judged but never
	// installed by a repair: its wheels are not all on
	// download.pytorch.org/whl/TAG under a local tag a pin can name.
	JudgeOnly  bool                     `json:"judge_only,omitempty"`
	Companions map[string]companionPair `json:"companions,omitempty"`
	Source     string                   `json:"source"`
}

// archRow is the arch list of one variant tag across some releases
// (data/arches.json).
type archRow struct {
	// Platform is the wheel platform (PlatformLinuxX86 when empty,
	// PlatformLinuxARM, PlatformWindows): the same tag carries other
	// code on each (no PTX on Windows, sm_110 only on aarch64).
	Platform   string   `json:"platform,omitempty"`
	Minors     []string `json:"minors"`
	Tag        string   `json:"tag"`
	SASS       []string `json:"sass"`
	PTX        []string `json:"ptx,omitempty"`
	Unverified bool     `json:"unverified,omitempty"`
	Source     string   `json:"source"`
}

// The wheel platforms the arch lists are kept for.
const (
	PlatformLinuxX86 = "linux-x86_64"
	PlatformLinuxARM = "linux-aarch64"
	PlatformWindows  = "windows-x86_64"
)

// platformOf is a row's platform, the default filled in.
func (a *archRow) platformOf() string {
	if a.Platform == "" {
		return PlatformLinuxX86
	}
	return a.Platform
}

// archKey is the index of one arch list: platform, minor release, tag.
func archKey(platform, minor, tag string) string { return platform + " " + minor + " " + tag }

// driverRow is the driver floors of one CUDA version (data/drivers.json).
type driverRow struct {
	CUDA         string `json:"cuda"`
	LinuxMinor   string `json:"linux_minor"`
	WindowsMinor string `json:"windows_minor"`
	LinuxFull    string `json:"linux_full"`
	// WindowsFull is "" where NVIDIA's table says N/A (WindowsNA: CUDA
	// 13.1 and later ship no Windows driver of their own; the R580
	// branch, WindowsMinor, runs them).
	WindowsFull       string `json:"windows_full,omitempty"`
	WindowsNA         bool   `json:"windows_na,omitempty"`
	Unverified        bool   `json:"unverified,omitempty"`
	WindowsUnverified bool   `json:"windows_unverified,omitempty"`
	Source            string `json:"source"`
}

// gpuRow is the architecture of one compute capability (data/gpus.json).
type gpuRow struct {
	CC   string `json:"cc"`
	Arch string `json:"arch"`
	// Names are regular expressions over NVML device names of GPUs with
	// this compute capability, and NamesSource where they come from.
	Names       []string `json:"names,omitempty"`
	NamesSource string   `json:"names_source,omitempty"`
	Examples    string   `json:"examples,omitempty"`
	Unverified  bool     `json:"unverified,omitempty"`
	Source      string   `json:"source"`
}

// tables is every fact, parsed and indexed.
type tables struct {
	// asOf is the day the embedded facts were last checked.
	asOf string
	// overlays are the overlay files read over them, in order.
	overlays []OverlayFile

	releases []releaseRow
	arches   []archRow
	drivers  []driverRow
	gpus     []gpuRow

	byMinor map[string]*releaseRow
	archOf  map[string]*archRow // archKey(platform, minor, tag)

	// names are gpus' Names compiled, by row, on first use (CCForName).
	namesOnce sync.Once
	names     [][]*regexp.Regexp
}

// gpuNames is each gpus row's Names compiled (checked already).
func (t *tables) gpuNames() [][]*regexp.Regexp {
	t.namesOnce.Do(func() {
		t.names = make([][]*regexp.Regexp, len(t.gpus))
		for i, g := range t.gpus {
			for _, n := range g.Names {
				if re, err := regexp.Compile("(?i)" + n); err == nil {
					t.names[i] = append(t.names[i], re)
				}
			}
		}
	})
	return t.names
}

var (
	loadOnce sync.Once
	loaded   *tables
)

// facts is the embedded tables with the overlay files over them, read
// once, on first use: a command that never asks reads nothing.
func facts() *tables {
	loadOnce.Do(func() { loaded = withOverlays(embeddedTables(), OverlayPaths()) })
	return loaded
}

// embeddedTables is the embedded tables, built as Go at build time
// (tables_gen.go, from data/*.json): a run decodes and checks no JSON.
// TestEmbeddedData checks the rows and TestGeneratedTables holds the Go
// to the JSON.
func embeddedTables() *tables {
	t := generatedTables()
	t.lookups()
	return t
}

// index builds the lookups and rejects rows that would make answers wrong:
// a missing source, an unreadable version or tag, a duplicate, an arch
// list for a variant the release does not offer.
func (t *tables) index() error {
	if err := t.check(); err != nil {
		return err
	}
	t.lookups()
	return nil
}

// lookups builds the tables' indexes from rows already checked.
func (t *tables) lookups() {
	t.byMinor, t.archOf = make(map[string]*releaseRow, len(t.releases)), map[string]*archRow{}
	for i := range t.releases {
		t.byMinor[t.releases[i].Minor] = &t.releases[i]
	}
	for i := range t.arches {
		a := &t.arches[i]
		for _, m := range a.Minors {
			t.archOf[archKey(a.platformOf(), m, a.Tag)] = a
		}
	}
}

// check rejects rows that would make answers wrong (index's list).
func (t *tables) check() error {
	byMinor, archOf := map[string]*releaseRow{}, map[string]*archRow{}
	if len(t.releases) == 0 || len(t.arches) == 0 || len(t.drivers) == 0 || len(t.gpus) == 0 {
		return fmt.Errorf("checking data: a table is empty")
	}
	for i := range t.releases {
		r := &t.releases[i]
		if err := r.check(); err != nil {
			return fmt.Errorf("checking data/releases.json row %q: %w", r.Minor, err)
		}
		if _, dup := byMinor[r.Minor]; dup {
			return fmt.Errorf("checking data/releases.json: %s listed twice", r.Minor)
		}
		if i > 0 && compareTorch(t.releases[i-1].Patches[0], r.Patches[0]) >= 0 {
			return fmt.Errorf("checking data/releases.json: %s is not after %s", r.Minor, t.releases[i-1].Minor)
		}
		byMinor[r.Minor] = r
	}
	for i := range t.arches {
		a := &t.arches[i]
		if a.Source == "" || len(a.SASS) == 0 {
			return fmt.Errorf("checking data/arches.json row %s %v: missing source or sass", a.Tag, a.Minors)
		}
		if p := a.platformOf(); p != PlatformLinuxX86 && p != PlatformLinuxARM && p != PlatformWindows {
			return fmt.Errorf("checking data/arches.json row %s %v: unknown platform %q", a.Tag, a.Minors, a.Platform)
		}
		for _, cc := range slices.Concat(a.SASS, a.PTX) {
			if _, _, ok := cudaParts(cc); !ok {
				return fmt.Errorf("checking data/arches.json row %s %v: bad compute capability %q", a.Tag, a.Minors, cc)
			}
		}
		for _, m := range a.Minors {
			r, ok := byMinor[m]
			if !ok || !slices.Contains(r.Tags, a.Tag) {
				return fmt.Errorf("checking data/arches.json row %s: torch %s does not offer it", a.Tag, m)
			}
			key := archKey(a.platformOf(), m, a.Tag)
			if _, dup := archOf[key]; dup {
				return fmt.Errorf("checking data/arches.json: %s %s %s listed twice", a.platformOf(), m, a.Tag)
			}
			archOf[key] = a
		}
	}
	for i, d := range t.drivers {
		if d.Source == "" || d.LinuxMinor == "" || d.LinuxFull == "" || d.WindowsMinor == "" || (d.WindowsFull == "") != d.WindowsNA {
			return fmt.Errorf("checking data/drivers.json row %q: missing source or floor (windows_full is empty exactly when windows_na is set)", d.CUDA)
		}
		if _, _, ok := cudaParts(d.CUDA); !ok {
			return fmt.Errorf("checking data/drivers.json: bad CUDA version %q", d.CUDA)
		}
		floors := []string{d.LinuxMinor, d.LinuxFull, d.WindowsMinor}
		if !d.WindowsNA {
			floors = append(floors, d.WindowsFull)
		}
		for _, f := range floors {
			if _, ok := parseDriver(f); !ok {
				return fmt.Errorf("checking data/drivers.json row %q: bad driver version %q", d.CUDA, f)
			}
		}
		// Oldest first, each full floor above the last: CUDAForDriver
		// reads a driver's CUDA version off this order (Windows' off the
		// rows that have a Windows floor of their own).
		if i > 0 {
			prev := t.drivers[i-1]
			c, _ := compareCUDA(prev.CUDA, d.CUDA)
			l, _ := compareDriver(prev.LinuxFull, d.LinuxFull)
			w := -1
			if lastW := lastWindowsFull(t.drivers[:i]); lastW != "" && !d.WindowsNA {
				w, _ = compareDriver(lastW, d.WindowsFull)
			}
			if c >= 0 || l >= 0 || w >= 0 {
				return fmt.Errorf("checking data/drivers.json: %s is not after %s, or its full floors are not above its", d.CUDA, prev.CUDA)
			}
		}
	}
	for i := range t.gpus {
		g := &t.gpus[i]
		if g.Source == "" || g.Arch == "" {
			return fmt.Errorf("checking data/gpus.json row %q: missing source or architecture", g.CC)
		}
		if _, _, ok := cudaParts(g.CC); !ok {
			return fmt.Errorf("checking data/gpus.json: bad compute capability %q", g.CC)
		}
		if len(g.Names) > 0 && g.NamesSource == "" {
			return fmt.Errorf("checking data/gpus.json row %q: names without names_source", g.CC)
		}
		for _, n := range g.Names {
			if _, err := regexp.Compile("(?i)" + n); err != nil {
				return fmt.Errorf("checking data/gpus.json row %q: name %q: %w", g.CC, n, err)
			}
		}
	}
	return nil
}

// lastWindowsFull is the Windows full floor of the newest of rows that
// has one.
func lastWindowsFull(rows []driverRow) string {
	for i := len(rows) - 1; i >= 0; i-- {
		if !rows[i].WindowsNA {
			return rows[i].WindowsFull
		}
	}
	return ""
}

// check rejects a release row that answers could not be built from.
func (r *releaseRow) check() error {
	if r.Source == "" || len(r.Patches) == 0 || len(r.Tags) == 0 {
		return fmt.Errorf("missing source, patches or tags")
	}
	for _, p := range r.Patches {
		if v, ok := parseTorch(p); !ok || v.minor != r.Minor || v.patch != p {
			return fmt.Errorf("patch %q is not a %s release", p, r.Minor)
		}
	}
	for p := range r.Companions {
		if !slices.Contains(r.Patches, p) {
			return fmt.Errorf("companions for %q, which is not a patch release", p)
		}
	}
	for _, tag := range r.TagsUnverified {
		if !slices.Contains(r.Tags, tag) {
			return fmt.Errorf("unverified tag %q is not one of its tags", tag)
		}
	}
	for tag, ps := range r.TagPlatforms {
		if !slices.Contains(r.Tags, tag) {
			return fmt.Errorf("platforms for %q, which is not one of its tags", tag)
		}
		for _, p := range ps {
			if p != PlatformLinuxX86 && p != PlatformLinuxARM && p != PlatformWindows {
				return fmt.Errorf("tag %q: unknown platform %q", tag, p)
			}
		}
	}
	prev := ""
	for _, tag := range r.Tags {
		cuda, ok := CUDAForTag(tag)
		if !ok {
			return fmt.Errorf("bad tag %q", tag)
		}
		if prev != "" {
			if c, _ := compareCUDA(prev, cuda); c >= 0 {
				return fmt.Errorf("tags not oldest CUDA first at %q", tag)
			}
		}
		prev = cuda
	}
	if _, _, ok := cudaParts(r.PyPILinuxCUDA); !ok {
		return fmt.Errorf("bad PyPI CUDA %q", r.PyPILinuxCUDA)
	}
	return nil
}
