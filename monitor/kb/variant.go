package kb

import (
	"fmt"
	"slices"
	"strings"
)

// VariantOffered says whether download.pytorch.org has a build of torch
// torchVersion for the CUDA index tag ("cu128"), so a variant asked for
// by hand is checked before anything is installed: SupportNo when it
// cannot exist (a tag no CUDA release has, a variant the release does not
// offer), SupportUnknown when the table cannot tell (a release newer than
// the table, a tag it has not verified).
func VariantOffered(torchVersion, tag string) (Support, string) {
	cuda, ok := CUDAForTag(tag)
	if !ok {
		return SupportNo, fmt.Sprintf("%q is not a CUDA variant (expected a tag like cu124)", tag)
	}
	if r, v, known := releaseOf(torchVersion); known {
		switch {
		case !slices.Contains(r.Tags, tag):
			return SupportNo, fmt.Sprintf("pytorch.org has no %s build of torch %s: its CUDA variants are %s", tag, v.patch, strings.Join(r.Tags, ", "))
		case slices.Contains(r.TagsUnverified, tag):
			return SupportUnknown, fmt.Sprintf("that pytorch.org has a %s build of torch %s is not verified", tag, v.patch)
		}
		return SupportYes, fmt.Sprintf("pytorch.org has %s builds of torch %s", tag, r.Minor)
	}
	if _, ok := parseTorch(torchVersion); !ok {
		return SupportUnknown, fmt.Sprintf("torch version %q cannot be read, so whether it has a %s build is not known", torchVersion, tag)
	}
	newest := ""
	for _, c := range knownCUDAs() {
		if c == cuda {
			return SupportUnknown, fmt.Sprintf("torch %s is newer than GPU Canary's release table, so whether it has a %s build is not known", torchVersion, tag)
		}
		newest = c
	}
	nm, _, _ := cudaParts(newest)
	cm, _, _ := cudaParts(cuda)
	if d, _ := compareCUDA(cuda, newest); d > 0 && cm <= nm+1 {
		return SupportUnknown, fmt.Sprintf("CUDA %s is newer than every CUDA version GPU Canary knows (up to %s), so whether torch %s has a %s build is not known", cuda, newest, torchVersion, tag)
	}
	return SupportNo, fmt.Sprintf("no torch release is built for CUDA %s (%s): the CUDA versions GPU Canary knows go up to %s, and releases newer than its table use newer CUDA versions, not older ones",
		cuda, tag, newest)
}

// knownCUDAs are the CUDA versions of every tag, and those of driver rows
// newer than every tag (what the next releases may be built for), oldest
// first. A driver row between tags (12.3, 12.5) is no CUDA version torch
// was built for: releases newer than the table use newer CUDA versions.
func knownCUDAs() []string {
	var out []string
	add := func(c string) {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	newestTag := ""
	for _, r := range facts().releases {
		for _, t := range r.Tags {
			c, _ := CUDAForTag(t)
			add(c)
			if d, _ := compareCUDA(c, newestTag); newestTag == "" || d > 0 {
				newestTag = c
			}
		}
	}
	for _, d := range facts().drivers {
		if c, _ := compareCUDA(d.CUDA, newestTag); c > 0 {
			add(d.CUDA)
		}
	}
	slices.SortFunc(out, func(a, b string) int { c, _ := compareCUDA(a, b); return c })
	return out
}
