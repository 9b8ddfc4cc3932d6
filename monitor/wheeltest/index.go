package wheeltest

import (
	"fmt"
	"html"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Index serves wheels the way download.pytorch.org does: BASE/TAG/ is a
// PEP 503 simple index whose projects are the wheels added under TAG.
type Index struct {
	dir string
	mu  sync.Mutex
	// wheels: tag -> project -> file names
	wheels   map[string]map[string][]string
	requests int
	delay    time.Duration
}

// Requests counts the files fetched, for tests that check nothing was.
func (x *Index) Requests() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.requests
}

// SetDelay holds each file download back by d, so that an install can be
// stopped half-way.
func (x *Index) SetDelay(d time.Duration) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.delay = d
}

// NewIndex keeps its wheels under dir.
func NewIndex(dir string) *Index {
	return &Index{dir: dir, wheels: map[string]map[string][]string{}}
}

// Add builds s and publishes it under tag, with the NVIDIA runtime wheels
// it requires (Spec.Runtime), as download.pytorch.org's cuNNN indexes
// serve them beside torch.
func (x *Index) Add(tag string, s Spec) error {
	d := filepath.Join(x.dir, tag)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return fmt.Errorf("adding %s to the index: %w", s.Filename(), err)
	}
	if _, err := Write(d, s); err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.wheels[tag] == nil {
		x.wheels[tag] = map[string][]string{}
	}
	for _, w := range append(slices.Clone(s.Runtime), s) {
		project := normalize(w.Name)
		if !slices.Contains(x.wheels[tag][project], w.Filename()) {
			x.wheels[tag][project] = append(x.wheels[tag][project], w.Filename())
		}
	}
	return nil
}

// ServeHTTP answers /TAG/, /TAG/PROJECT/ and /TAG/files/FILE.
func (x *Index) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(path.Clean(r.URL.Path), "/"), "/")
	x.mu.Lock()
	defer x.mu.Unlock()
	tag := parts[0]
	projects, ok := x.wheels[tag]
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch {
	case len(parts) == 1:
		names := make([]string, 0, len(projects))
		for p := range projects {
			names = append(names, p)
		}
		sort.Strings(names)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!DOCTYPE html><html><body>\n")
		for _, p := range names {
			fmt.Fprintf(w, "<a href=\"%s/\">%s</a><br>\n", p, p)
		}
		fmt.Fprint(w, "</body></html>\n")
	case len(parts) == 2:
		files, ok := projects[normalize(parts[1])]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!DOCTYPE html><html><body>\n")
		for _, f := range files {
			fmt.Fprintf(w, "<a href=\"../files/%s\">%s</a><br>\n", html.EscapeString(f), html.EscapeString(f))
		}
		fmt.Fprint(w, "</body></html>\n")
	case len(parts) == 3 && parts[1] == "files":
		x.requests++
		if d := x.delay; d > 0 {
			x.mu.Unlock()
			time.Sleep(d)
			x.mu.Lock()
		}
		http.ServeFile(w, r, filepath.Join(x.dir, tag, filepath.Base(parts[2])))
	default:
		http.NotFound(w, r)
	}
}

func normalize(name string) string {
	return strings.NewReplacer("_", "-", ".", "-").Replace(strings.ToLower(name))
}
