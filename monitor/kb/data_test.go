package kb

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// dataFS is the facts as written, with their sources: a run uses them as
// built into tables_gen.go (TestGeneratedTables).
//
//go:embed data/*.json
var dataFS embed.FS

// embedded returns the data files, keyed as parseTables wants.
func embedded(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, name := range []string{"releases", "arches", "drivers", "gpus"} {
		b, err := dataFS.ReadFile("data/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	return files
}

func TestEmbeddedData(t *testing.T) {
	if _, err := parseTables(embedded(t)); err != nil {
		t.Fatalf("embedded data: %v", err)
	}
	f := facts()
	if len(f.releases) < 13 || len(f.arches) == 0 || len(f.drivers) == 0 || len(f.gpus) == 0 {
		t.Fatalf("tables too small: %d releases, %d arch rows, %d drivers, %d gpus",
			len(f.releases), len(f.arches), len(f.drivers), len(f.gpus))
	}
}

func TestEveryRowHasASource(t *testing.T) {
	f := facts()
	var rows []struct{ name, source string }
	for _, r := range f.releases {
		rows = append(rows, struct{ name, source string }{"release " + r.Minor, r.Source})
	}
	for _, a := range f.arches {
		rows = append(rows, struct{ name, source string }{"arches " + a.Tag + " " + strings.Join(a.Minors, ","), a.Source})
	}
	for _, d := range f.drivers {
		rows = append(rows, struct{ name, source string }{"driver " + d.CUDA, d.Source})
	}
	for _, g := range f.gpus {
		rows = append(rows, struct{ name, source string }{"gpu " + g.CC, g.Source})
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if strings.TrimSpace(r.source) == "" {
				t.Error("no source")
			}
		})
	}
}

func TestParseTablesRejectsBadData(t *testing.T) {
	tests := []struct {
		name, file, old, new, want string
	}{
		{"missing source", "gpus", `"source": "KB-FACTS.md GPU compute capability list"`, `"source": ""`, "missing source"},
		{"unknown field", "drivers", `"cuda": "12.4"`, `"cuda": "12.4", "cuad": "x"`, "unknown field"},
		{"bad tag", "releases", `"cu116", "cu117"`, `"cu116", "rocm5.2"`, "bad tag"},
		{"tags out of order", "releases", `"cu116", "cu117"`, `"cu117", "cu116"`, "oldest CUDA first"},
		{"patch of another release", "releases", `"patches": ["2.6.0"]`, `"patches": ["2.7.0"]`, "is not a 2.6 release"},
		{"releases out of order", "releases", `{"minor": "2.1", "patches": ["2.1.0", "2.1.1", "2.1.2"]`, `{"minor": "3.1", "patches": ["3.1.0", "3.1.1", "3.1.2"]`, "is not after"},
		{"arch list for a variant not offered", "arches", `"minors": ["2.7"], "tag": "cu128"`, `"minors": ["2.7"], "tag": "cu129"`, "does not offer it"},
		{"arch list twice", "arches", `"minors": ["2.11"], "tag": "cu128"`, `"minors": ["2.10"], "tag": "cu128"`, "listed twice"},
		{"bad compute capability", "gpus", `"cc": "8.6"`, `"cc": "eight"`, "bad compute capability"},
		{"not json", "arches", `{`, `[`, "decoding data/arches.json"},
		{"names without their source", "gpus", `"names_source": "NVIDIA CUDA GPUs list, developer.nvidia.com/cuda-gpus (unverified: not read from the page here)", `, ``, "names without names_source"},
		{"a name that is no regular expression", "gpus", `"\\bK80\\b"`, `"(K80"`, "name"},
		{"an unverified tag that is not a tag", "releases", `"tags_unverified": ["cu113"]`, `"tags_unverified": ["cu999"]`, "unverified tag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := embedded(t)
			s := string(files[tt.file])
			if !strings.Contains(s, tt.old) {
				t.Fatalf("data/%s.json has no %q to break", tt.file, tt.old)
			}
			files[tt.file] = []byte(strings.Replace(s, tt.old, tt.new, 1))
			_, err := parseTables(files)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parseTables = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestUnverifiedRowsAreCarried(t *testing.T) {
	if a, ok := archListFor("2.7.1", "cu128"); !ok || !a.Unverified {
		t.Errorf("2.7 cu128 arch list = %+v, %v; want unverified", a, ok)
	}
	if a, ok := archListFor("2.8.0", "cu128"); !ok || a.Unverified {
		t.Errorf("2.8 cu128 arch list = %+v, %v; want verified", a, ok)
	}
	if r, ok := ReleaseFor("2.10.0"); !ok || !r.PyPIUnverified {
		t.Errorf("2.10 release = %+v, %v; want the PyPI CUDA unverified", r, ok)
	}
	if r, ok := ReleaseFor("2.5.1"); !ok || r.PyPIUnverified {
		t.Errorf("2.5 release = %+v, %v; want the PyPI CUDA verified", r, ok)
	}
	if f, ok := DriverFloorFor("13.0", "windows"); !ok || !f.Unverified {
		t.Errorf("13.0 windows floor = %+v, %v; want unverified", f, ok)
	}
	if f, ok := DriverFloorFor("13.0", "linux"); !ok || f.Unverified {
		t.Errorf("13.0 linux floor = %+v, %v; want verified", f, ok)
	}
	if v := buildRunsOnGPU("2.7.1", "cu128", "8.6"); !strings.Contains(v.Reason, "not verified") {
		t.Errorf("a verdict from an unverified arch list does not say so: %q", v.Reason)
	}
}

// parseTables decodes and checks the four tables, keyed by file name
// without extension.
func parseTables(files map[string][]byte) (*tables, error) {
	// Each file is {"comment": "what the table is", "<name>": [rows]}.
	var (
		r struct {
			Comment  string
			AsOf     string `json:"as_of"`
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
	if _, err := time.Parse(time.DateOnly, r.AsOf); err != nil {
		return nil, fmt.Errorf("decoding data/releases.json: as_of %q is not a date", r.AsOf)
	}
	t := &tables{asOf: r.AsOf, releases: r.Releases, arches: a.Arches, drivers: d.Drivers, gpus: g.GPUs}
	if err := t.index(); err != nil {
		return nil, err
	}
	return t, nil
}
