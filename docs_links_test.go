package gpucanary_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink is a Markdown link or image: ](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// fence matches a fenced code block, whose text is not Markdown.
var fence = regexp.MustCompile("(?s)```.*?```")

// TestDocsLinksResolve keeps the README and docs/ navigable: every relative
// link names a file that exists and, with a #anchor, a heading of that
// file. The README was split into docs/ once; a heading renamed or a file
// moved later would otherwise leave links that lead nowhere.
func TestDocsLinksResolve(t *testing.T) {
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"README.md"}, files...)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := fence.ReplaceAllString(string(b), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := f
			if path != "" {
				dest = filepath.Join(filepath.Dir(f), path)
			}
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s: link %s: %v", f, target, err)
				continue
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			if !headingAnchors(t, dest)[anchor] {
				t.Errorf("%s: link %s: %s has no heading with that anchor", f, target, dest)
			}
		}
	}
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown file: lower case, punctuation dropped, spaces as hyphens.
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	drop := regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
	out := map[string]bool{}
	for _, line := range strings.Split(fence.ReplaceAllString(string(b), ""), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		out[strings.ReplaceAll(drop.ReplaceAllString(h, ""), " ", "-")] = true
	}
	return out
}
