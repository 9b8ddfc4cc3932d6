package kb

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sync"
)

//go:embed data/*.json
var dataFS embed.FS

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
	PyPIUnverified bool     `json:"pypi_unverified"`
	// TagsUnverified are tags not read from pytorch.org's own pages.
	TagsUnverified []string `json:"tags_unverified"`
	// JudgeOnly marks a release whose builds are judged but never
	// installed by a repair: its wheels are not all on
	// download.pytorch.org/whl/TAG under a local tag a pin can name.
	JudgeOnly  bool                     `json:"judge_only"`
	Companions map[string]companionPair `json:"companions"`
	Source     string                   `json:"source"`
}

// archRow is the arch list of one variant tag across some releases
// (data/arches.json).
type archRow struct {
	Minors     []string `json:"minors"`
	Tag        string   `json:"tag"`
	SASS       []string `json:"sass"`
	PTX        []string `json:"ptx"`
	Unverified bool     `json:"unverified"`
	Source     string   `json:"source"`
}

// driverRow is the driver floors of one CUDA version (data/drivers.json).
type driverRow struct {
	CUDA              string `json:"cuda"`
	LinuxMinor        string `json:"linux_minor"`
	WindowsMinor      string `json:"windows_minor"`
	LinuxFull         string `json:"linux_full"`
	WindowsFull       string `json:"windows_full"`
	Unverified        bool   `json:"unverified"`
	WindowsUnverified bool   `json:"windows_unverified"`
	Source            string `json:"source"`
}

// gpuRow is the architecture of one compute capability (data/gpus.json).
type gpuRow struct {
	CC   string `json:"cc"`
	Arch string `json:"arch"`
	// Names are regular expressions over NVML device names of GPUs with
	// this compute capability, and NamesSource where they come from.
	Names       []string `json:"names"`
	NamesSource string   `json:"names_source"`
	Examples    string   `json:"examples"`
	Unverified  bool     `json:"unverified"`
	Source      string   `json:"source"`

	names []*regexp.Regexp
}

// tables is every fact, parsed and indexed.
type tables struct {
	releases []releaseRow
	arches   []archRow
	drivers  []driverRow
	gpus     []gpuRow

	byMinor map[string]*releaseRow
	archOf  map[string]*archRow // key minor + " " + tag
}

var (
	loadOnce sync.Once
	loaded   *tables
)

// facts parses the embedded tables once. Bad embedded data is a build
// defect, caught by TestEmbeddedData, so it panics.
func facts() *tables {
	loadOnce.Do(func() {
		files := map[string][]byte{}
		for _, name := range []string{"releases", "arches", "drivers", "gpus"} {
			b, err := dataFS.ReadFile("data/" + name + ".json")
			if err != nil {
				panic(fmt.Sprintf("kb: reading embedded data/%s.json: %v", name, err))
			}
			files[name] = b
		}
		t, err := parseTables(files)
		if err != nil {
			panic("kb: " + err.Error())
		}
		loaded = t
	})
	return loaded
}

// parseTables decodes and checks the four tables, keyed by file name
// without extension.
func parseTables(files map[string][]byte) (*tables, error) {
	// Each file is {"comment": "what the table is", "<name>": [rows]}.
	var (
		r struct {
			Comment  string
			Releases []releaseRow
		}
		a struct {
			Comment string
			Arches  []archRow
		}
		d struct {
			Comment string
			Drivers []driverRow
		}
		g struct {
			Comment string
			GPUs    []gpuRow
		}
	)
	for name, dst := range map[string]any{"releases": &r, "arches": &a, "drivers": &d, "gpus": &g} {
		dec := json.NewDecoder(bytes.NewReader(files[name]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(dst); err != nil {
			return nil, fmt.Errorf("decoding data/%s.json: %w", name, err)
		}
	}
	t := &tables{releases: r.Releases, arches: a.Arches, drivers: d.Drivers, gpus: g.GPUs,
		byMinor: map[string]*releaseRow{}, archOf: map[string]*archRow{}}
	if err := t.index(); err != nil {
		return nil, err
	}
	return t, nil
}

// index builds the lookups and rejects rows that would make answers wrong:
// a missing source, an unreadable version or tag, a duplicate, an arch
// list for a variant the release does not offer.
func (t *tables) index() error {
	if len(t.releases) == 0 || len(t.arches) == 0 || len(t.drivers) == 0 || len(t.gpus) == 0 {
		return fmt.Errorf("checking data: a table is empty")
	}
	for i := range t.releases {
		r := &t.releases[i]
		if err := r.check(); err != nil {
			return fmt.Errorf("checking data/releases.json row %q: %w", r.Minor, err)
		}
		if _, dup := t.byMinor[r.Minor]; dup {
			return fmt.Errorf("checking data/releases.json: %s listed twice", r.Minor)
		}
		if i > 0 && compareTorch(t.releases[i-1].Patches[0], r.Patches[0]) >= 0 {
			return fmt.Errorf("checking data/releases.json: %s is not after %s", r.Minor, t.releases[i-1].Minor)
		}
		t.byMinor[r.Minor] = r
	}
	for i := range t.arches {
		a := &t.arches[i]
		if a.Source == "" || len(a.SASS) == 0 {
			return fmt.Errorf("checking data/arches.json row %s %v: missing source or sass", a.Tag, a.Minors)
		}
		for _, cc := range slices.Concat(a.SASS, a.PTX) {
			if _, _, ok := cudaParts(cc); !ok {
				return fmt.Errorf("checking data/arches.json row %s %v: bad compute capability %q", a.Tag, a.Minors, cc)
			}
		}
		for _, m := range a.Minors {
			r, ok := t.byMinor[m]
			if !ok || !slices.Contains(r.Tags, a.Tag) {
				return fmt.Errorf("checking data/arches.json row %s: torch %s does not offer it", a.Tag, m)
			}
			key := m + " " + a.Tag
			if _, dup := t.archOf[key]; dup {
				return fmt.Errorf("checking data/arches.json: %s %s listed twice", m, a.Tag)
			}
			t.archOf[key] = a
		}
	}
	for i, d := range t.drivers {
		if d.Source == "" || d.LinuxMinor == "" || d.LinuxFull == "" || d.WindowsMinor == "" || d.WindowsFull == "" {
			return fmt.Errorf("checking data/drivers.json row %q: missing source or floor", d.CUDA)
		}
		if _, _, ok := cudaParts(d.CUDA); !ok {
			return fmt.Errorf("checking data/drivers.json: bad CUDA version %q", d.CUDA)
		}
		for _, f := range []string{d.LinuxMinor, d.LinuxFull, d.WindowsMinor, d.WindowsFull} {
			if _, ok := parseDriver(f); !ok {
				return fmt.Errorf("checking data/drivers.json row %q: bad driver version %q", d.CUDA, f)
			}
		}
		// Oldest first, each full floor above the last: CUDAForDriver
		// reads a driver's CUDA version off this order.
		if i > 0 {
			prev := t.drivers[i-1]
			c, _ := compareCUDA(prev.CUDA, d.CUDA)
			l, _ := compareDriver(prev.LinuxFull, d.LinuxFull)
			w, _ := compareDriver(prev.WindowsFull, d.WindowsFull)
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
			re, err := regexp.Compile("(?i)" + n)
			if err != nil {
				return fmt.Errorf("checking data/gpus.json row %q: name %q: %w", g.CC, n, err)
			}
			g.names = append(g.names, re)
		}
	}
	return nil
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
