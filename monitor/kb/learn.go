package kb

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Wheel is one torch wheel a wheel index lists, as `gpucanary kb
// refresh` reads it from a file name: torch-2.15.0+cu132-cp312-cp312-
// manylinux_2_28_x86_64.whl is Version "2.15.0+cu132" on PlatformLinuxX86.
type Wheel struct {
	Version  string
	Platform string // PlatformLinuxX86, PlatformLinuxARM, PlatformWindows; "" for others
}

// Learned is what an index taught over what was known: the rows an
// overlay holds, and in words what is new.
type Learned struct {
	// Overlay is the overlay file's content (the releases list, empty
	// when the index shows nothing beyond the embedded tables).
	Overlay []byte
	// News says what the index shows beyond the embedded tables ("torch
	// 2.16 (2.16.0): cu130, cu132"), one line each.
	News []string
}

// LearnFromIndex turns the wheels an index lists into an overlay of the
// release rows they change in the embedded tables: a release they lack,
// or a patch release or CUDA tag a known release lacks, with the platforms each tag
// has wheels for. source names the index and the day, for the rows'
// source. What an index cannot say (the CUDA of the PyPI wheel) a new
// release takes from the newest release known, marked unverified; its arch
// lists are inferred from its tags' (CheckBuild).
func LearnFromIndex(wheels []Wheel, source string) (Learned, error) {
	type seen struct {
		patches   []string
		platforms map[string][]string // tag -> platforms
	}
	byMinor := map[string]*seen{}
	var minors []string
	for _, w := range wheels {
		v, ok := parseTorch(w.Version)
		if !ok || unofficial(w.Version) != "" || strings.Contains(w.Version, ".dev") || strings.Contains(w.Version, ".post") {
			continue // nightlies, pre-releases and odd builds teach nothing
		}
		s := byMinor[v.minor]
		if s == nil {
			s = &seen{platforms: map[string][]string{}}
			byMinor[v.minor] = s
			minors = append(minors, v.minor)
		}
		if !slices.Contains(s.patches, v.patch) {
			s.patches = append(s.patches, v.patch)
		}
		tag := localTag(w.Version)
		if _, ok := CUDAForTag(tag); !ok || w.Platform == "" {
			continue
		}
		if !slices.Contains(s.platforms[tag], w.Platform) {
			s.platforms[tag] = append(s.platforms[tag], w.Platform)
		}
	}
	// Against the embedded tables alone: the refresh overlay replaces the
	// last one whole, so it holds all the index shows beyond them.
	t := embeddedTables()
	newest := t.releases[len(t.releases)-1]
	var out []releaseRow
	var news []string
	slices.SortFunc(minors, func(a, b string) int { return compareTorch(a+".0", b+".0") })
	for _, minor := range minors {
		s := byMinor[minor]
		var row releaseRow
		if known, ok := t.byMinor[minor]; ok {
			row = cloneRelease(*known)
		} else {
			if len(s.platforms) == 0 {
				continue // a release without CUDA wheels (a CPU-only index) is no row
			}
			row = releaseRow{Minor: minor, PyPILinuxCUDA: newest.PyPILinuxCUDA, PyPIUnverified: true,
				Source: fmt.Sprintf("%s; the CUDA of its PyPI wheel was not read, and is taken from torch %s's", source, newest.Minor)}
		}
		var added []string
		for _, p := range s.patches {
			if !slices.Contains(row.Patches, p) {
				row.Patches = append(row.Patches, p)
				added = append(added, p)
			}
		}
		tags := make([]string, 0, len(s.platforms))
		for tag := range s.platforms {
			tags = append(tags, tag)
		}
		slices.SortFunc(tags, func(a, b string) int { c, _ := compareCUDA(mustCUDA(a), mustCUDA(b)); return c })
		for _, tag := range tags {
			ps := s.platforms[tag]
			if !slices.Contains(row.Tags, tag) {
				row.Tags = append(row.Tags, tag)
				added = append(added, tag)
			}
			slices.Sort(ps)
			if row.TagPlatforms == nil {
				row.TagPlatforms = map[string][]string{}
			}
			if !slices.Equal(row.TagPlatforms[tag], ps) {
				row.TagPlatforms[tag] = ps
			}
		}
		if len(added) == 0 {
			continue
		}
		slices.SortFunc(row.Patches, compareTorch)
		slices.SortFunc(row.Tags, func(a, b string) int { c, _ := compareCUDA(mustCUDA(a), mustCUDA(b)); return c })
		if _, ok := t.byMinor[minor]; ok {
			row.Source += fmt.Sprintf("; %s added from %s", strings.Join(added, ", "), source)
			news = append(news, fmt.Sprintf("torch %s: %s", minor, strings.Join(added, ", ")))
		} else {
			news = append(news, fmt.Sprintf("torch %s (%s): %s", minor, strings.Join(row.Patches, ", "), strings.Join(row.Tags, ", ")))
		}
		if err := row.check(); err != nil {
			return Learned{}, fmt.Errorf("learning torch %s from the index: %w", minor, err)
		}
		out = append(out, row)
	}
	b, err := json.MarshalIndent(overlayFile{
		Comment:  "Written by gpucanary kb refresh from " + source + "; rows in the schema of gpucanary kb --json. Hand-written overlays belong in a kb.d folder: this file is replaced on the next refresh.",
		Releases: out,
	}, "", "  ")
	if err != nil {
		return Learned{}, fmt.Errorf("writing the learned releases: %w", err)
	}
	return Learned{Overlay: append(b, '\n'), News: news}, nil
}

// localTag is a version's local label ("cu132" of "2.15.0+cu132").
func localTag(version string) string {
	_, tag, _ := strings.Cut(version, "+")
	return tag
}

// cloneRelease copies a row deeply enough to change it.
func cloneRelease(r releaseRow) releaseRow {
	r.Patches, r.Tags, r.TagsUnverified = slices.Clone(r.Patches), slices.Clone(r.Tags), slices.Clone(r.TagsUnverified)
	tp := map[string][]string{}
	for k, v := range r.TagPlatforms {
		tp[k] = slices.Clone(v)
	}
	r.TagPlatforms = tp
	return r
}
