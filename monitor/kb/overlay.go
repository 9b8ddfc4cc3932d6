package kb

// Overlays: facts that update without a rebuild. Each overlay is one JSON
// object whose top-level lists ("releases", "arches", "drivers", "gpus")
// hold rows in the very schema `gpucanary kb --json` prints under the
// same key. They are read in order over the embedded tables, and a row
// replaces an earlier one with the same key (a release's minor; an arch
// list's platform, release and tag; a driver row's CUDA; a GPU's compute
// capability). A file that cannot be read, decoded or checked is named
// in OverlayFile.Err and left out: it never stops a command.
//
// An overlay changes verdicts (a row that adds sm_120 to torch 2.5's
// cu124 build turns GPU_ARCH_UNSUPPORTED into OK), so only one that no
// other user could have written is read: the file and its folder must be
// the user's own or the administrator's (root; Administrators or SYSTEM
// on Windows), and not writable by others, and so must the folders above
// them be (owned.Check with Policy{Admin: true}). Any other is skipped,
// with a warning that names it, its owner and its mode.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"

	"github.com/gpucanary/gpucanary/monitor/owned"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// OverlayFile is one overlay file GPU Canary looked at.
type OverlayFile struct {
	Path string `json:"path"`
	// Rows is how many rows it gave; Error says why it was ignored ("" when
	// it was read).
	Rows  int    `json:"rows"`
	Error string `json:"error,omitempty"`
}

// overlayFile is an overlay's content, each list in the schema of the
// embedded data.
type overlayFile struct {
	Comment  string       `json:"comment,omitempty"`
	Releases []releaseRow `json:"releases,omitempty"`
	Arches   []archRow    `json:"arches,omitempty"`
	Drivers  []driverRow  `json:"drivers,omitempty"`
	GPUs     []gpuRow     `json:"gpus,omitempty"`
	// What `gpucanary kb --json` prints besides its lists, so that its
	// whole output is an overlay too: not read.
	AsOf           json.RawMessage `json:"as_of,omitempty"`
	Newest         json.RawMessage `json:"newest,omitempty"`
	Overlays       json.RawMessage `json:"overlays,omitempty"`
	OverlayDirs    json.RawMessage `json:"overlay_dirs,omitempty"`
	RefreshOverlay json.RawMessage `json:"refresh_overlay,omitempty"`
}

// maxOverlay bounds what one overlay file may hold.
const maxOverlay = 4 << 20

// RefreshOverlayPath is where `gpucanary kb refresh` writes what it read
// from the wheel index: kb-refresh.json in GPU Canary's settings folder
// (os.UserConfigDir, so $XDG_CONFIG_HOME or %AppData%). It is read first,
// so the hand-written overlays in the kb.d folders win over it.
func RefreshOverlayPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the config directory: %w", err)
	}
	return filepath.Join(dir, "gpucanary", "kb-refresh.json"), nil
}

// OverlayDirs are the folders of hand-written overlays, read in this
// order: the system's (/etc/gpucanary/kb.d, on Windows
// %ProgramData%\gpucanary\kb.d), then the user's (kb.d in GPU Canary's
// settings folder), so the user's rows win.
func OverlayDirs() []string {
	var dirs []string
	if runtime.GOOS == "windows" {
		if pd := os.Getenv("ProgramData"); filepath.IsAbs(pd) {
			dirs = append(dirs, filepath.Join(pd, "gpucanary", "kb.d"))
		}
	} else {
		dirs = append(dirs, "/etc/gpucanary/kb.d")
	}
	if dir, err := os.UserConfigDir(); err == nil {
		dirs = append(dirs, filepath.Join(dir, "gpucanary", "kb.d"))
	}
	return dirs
}

// OverlayPaths are the overlay files that exist now, in the order they
// are read: the refresh overlay, then each kb.d folder's *.json by name.
func OverlayPaths() []string {
	var paths []string
	if p, err := RefreshOverlayPath(); err == nil {
		if _, err := os.Stat(p); err == nil {
			paths = append(paths, p)
		}
	}
	for _, dir := range OverlayDirs() {
		names, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		sort.Strings(names)
		paths = append(paths, names...)
	}
	return paths
}

// withOverlays reads each overlay over base in order. A file that fails is
// recorded with its error and changes nothing.
func withOverlays(base *tables, paths []string) *tables {
	t := base
	trusted := map[string]error{} // by folder
	for _, p := range paths {
		o, err := readTrusted(p, trusted)
		if err == nil {
			var next *tables
			if next, err = t.merge(o); err == nil {
				next.overlays = append(slices.Clone(t.overlays), OverlayFile{Path: p, Rows: o.rows()})
				t = next
				continue
			}
			err = fmt.Errorf("checking knowledge overlay %s over what came before it: %w", p, err)
		}
		t.overlays = append(t.overlays, OverlayFile{Path: p, Error: err.Error()})
	}
	return t
}

// readTrusted is readOverlay of a file that passes the owner check, with
// its folder's check asked once per folder (dirs).
func readTrusted(path string, dirs map[string]error) (overlayFile, error) {
	dir := filepath.Dir(path)
	err, done := dirs[dir]
	if !done {
		err = owned.Check(dir, owned.Policy{Admin: true})
		dirs[dir] = err
	}
	if err == nil {
		err = owned.Check(path, owned.Policy{Admin: true})
	}
	var u *owned.Untrusted
	switch {
	case errors.As(err, &u):
		return overlayFile{}, fmt.Errorf("not reading knowledge overlay %s: %w; another user could have written it (the administrator's overlays belong to root, in a folder only root can write)", path, err)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return overlayFile{}, fmt.Errorf("reading knowledge overlay %s: %w", path, err)
	}
	return readOverlay(path)
}

// readOverlay reads and decodes one overlay file; an unknown key or field
// is an error, since it is most often a typo that would silently do
// nothing.
func readOverlay(path string) (overlayFile, error) {
	var o overlayFile
	b, err := safefs.ReadFile(path, maxOverlay)
	if err != nil {
		return o, fmt.Errorf("reading knowledge overlay %s: %w", path, err)
	}
	// A UTF-8 byte order mark (Notepad writes one) is taken as the
	// settings and scenario files take it.
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return o, fmt.Errorf("reading knowledge overlay %s: %w (each file is one JSON object with the lists `gpucanary kb --json` prints)", path, err)
	}
	if dec.More() {
		return o, fmt.Errorf("reading knowledge overlay %s: more than one JSON value", path)
	}
	return o, nil
}

func (o overlayFile) rows() int {
	return len(o.Releases) + len(o.Arches) + len(o.Drivers) + len(o.GPUs)
}

// merge is t with o's rows over it, checked as the embedded data is;
// t is left as it was.
func (t *tables) merge(o overlayFile) (*tables, error) {
	n := &tables{asOf: t.asOf, overlays: t.overlays,
		releases: replaceBy(t.releases, o.Releases, func(r releaseRow) string { return r.Minor }),
		drivers:  replaceBy(t.drivers, o.Drivers, func(d driverRow) string { return d.CUDA }),
		gpus:     replaceBy(t.gpus, o.GPUs, func(g gpuRow) string { return g.CC }),
	}
	slices.SortStableFunc(n.releases, func(a, b releaseRow) int {
		if len(a.Patches) == 0 || len(b.Patches) == 0 {
			return 0 // index rejects it
		}
		return compareTorch(a.Patches[0], b.Patches[0])
	})
	slices.SortStableFunc(n.drivers, func(a, b driverRow) int { c, _ := compareCUDA(a.CUDA, b.CUDA); return c })
	slices.SortStableFunc(n.gpus, func(a, b gpuRow) int { c, _ := compareCUDA(a.CC, b.CC); return c })
	// An arch row covers several releases: an overlay row takes each of
	// its (platform, release, tag) keys from the rows before it.
	taken := map[string]bool{}
	for _, a := range o.Arches {
		for _, m := range a.Minors {
			taken[archKey(a.platformOf(), m, a.Tag)] = true
		}
	}
	for _, a := range t.arches {
		a.Minors = slices.DeleteFunc(slices.Clone(a.Minors), func(m string) bool { return taken[archKey(a.platformOf(), m, a.Tag)] })
		if len(a.Minors) > 0 {
			n.arches = append(n.arches, a)
		}
	}
	n.arches = append(n.arches, o.Arches...)
	if err := n.index(); err != nil {
		return nil, err
	}
	return n, nil
}

// replaceBy is base with each row of over replacing the row with its key,
// or added.
func replaceBy[T any](base, over []T, key func(T) string) []T {
	out := slices.Clone(base)
	for _, r := range over {
		if i := slices.IndexFunc(out, func(b T) bool { return key(b) == key(r) }); i >= 0 {
			out[i] = r
		} else {
			out = append(out, r)
		}
	}
	return out
}

// Overlays are the overlay files read, in order, each with the rows it
// gave or why it was ignored.
func Overlays() []OverlayFile { return slices.Clone(facts().overlays) }

// OverlayWarnings are the overlay files that were ignored, with why: for
// the commands to show as warnings.
func OverlayWarnings() []string {
	var out []string
	for _, o := range facts().overlays {
		if o.Error != "" {
			out = append(out, o.Error+"; the file is ignored")
		}
	}
	return out
}

// AsOf is the day the embedded facts were last checked (2026-11-26).
func AsOf() string { return facts().asOf }
