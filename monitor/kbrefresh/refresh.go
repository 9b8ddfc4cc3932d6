// Package kbrefresh teaches GPU Canary's knowledge base (monitor/kb) the
// torch releases and CUDA variants a PyTorch wheel index lists, without a
// rebuild: it reads the index's torch page (PEP 503 simple HTML), and
// writes what it shows beyond the embedded tables as the refresh overlay
// (kb.RefreshOverlayPath). It runs when asked (`gpucanary kb refresh`)
// or, when the kb_refresh setting turns it on, at most daily in the
// engine; never on its own otherwise.
package kbrefresh

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/kb"
)

// DefaultIndex is PyTorch's wheel index; its torch page is DefaultIndex
// + "/torch/".
const DefaultIndex = "https://download.pytorch.org/whl"

// Timeout bounds one refresh: the request, and reading the page.
const Timeout = 60 * time.Second

// maxPage bounds the torch page (download.pytorch.org's lists thousands
// of files, a few MB).
const maxPage = 64 << 20

// Result is what a refresh did.
type Result struct {
	// Page is the page read; Wheels how many torch wheels it listed.
	Page   string
	Wheels int
	// Path is the overlay written; News what it holds beyond the
	// embedded tables.
	Path string
	News []string
}

// Run reads index's torch page and writes the refresh overlay to path.
// client may be nil (http.DefaultClient's transport, with Timeout).
func Run(ctx context.Context, client *http.Client, index, path string, now time.Time) (Result, error) {
	page, err := pageURL(index)
	if err != nil {
		return Result{}, err
	}
	res := Result{Page: page, Path: path}
	wheels, err := Fetch(ctx, client, page)
	if err != nil {
		return res, err
	}
	res.Wheels = len(wheels)
	if len(wheels) == 0 {
		return res, fmt.Errorf("reading %s: it lists no torch wheels (is it a PyTorch wheel index?); the knowledge overlay was left as it was", page)
	}
	l, err := kb.LearnFromIndex(wheels, fmt.Sprintf("read from %s on %s (gpucanary kb refresh)", page, now.UTC().Format(time.DateOnly)))
	if err != nil {
		return res, err
	}
	res.News = l.News
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return res, fmt.Errorf("writing the knowledge overlay %s: %w", path, err)
	}
	if err := config.WriteAtomic(path, l.Overlay, 0o644); err != nil {
		return res, fmt.Errorf("writing the knowledge overlay %s: %w", path, err)
	}
	return res, nil
}

// pageURL is the torch page of an index base URL.
func pageURL(index string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(index))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("the index URL %q is not an http(s) URL", index)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/torch/"
	return u.String(), nil
}

// Fetch reads a PEP 503 torch page and returns the wheels it lists.
func Fetch(ctx context.Context, client *http.Client, page string) ([]kb.Wheel, error) {
	if client == nil {
		client = &http.Client{Timeout: Timeout}
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, page, nil)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", page, err)
	}
	req.Header.Set("Accept", "text/html")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w%s", page, err, offlineHint(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading %s: the server answered %s", page, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPage+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w%s", page, err, offlineHint(err))
	}
	if len(body) > maxPage {
		return nil, fmt.Errorf("reading %s: the page is over %d MB", page, maxPage>>20)
	}
	return Parse(string(body)), nil
}

// offlineHint says what an error reaching the index most likely means.
func offlineHint(err error) string {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Sprintf(" (no answer within %s: offline, or the index is slow?)", Timeout)
	case errors.As(err, &dns), errors.As(err, &op):
		return " (offline? GPU Canary goes on with what it knew; pass --index-url for a mirror)"
	}
	return ""
}

// anchor is one link of a simple index page: its href and its text.
var anchor = regexp.MustCompile(`(?is)<a\s[^>]*href\s*=\s*["']([^"']*)["'][^>]*>(.*?)</a>`)

// Parse reads the torch wheels a PEP 503 page links to, by file name:
// the link's text, else the last part of its href.
func Parse(page string) []kb.Wheel {
	var out []kb.Wheel
	for _, m := range anchor.FindAllStringSubmatch(page, -1) {
		name := strings.TrimSpace(html.UnescapeString(m[2]))
		if !strings.HasSuffix(name, ".whl") {
			href := html.UnescapeString(m[1])
			href, _, _ = strings.Cut(href, "#")
			if u, err := url.PathUnescape(path.Base(href)); err == nil {
				name = u
			}
		}
		if w, ok := ParseFileName(name); ok {
			out = append(out, w)
		}
	}
	return out
}

// ParseFileName reads a torch wheel's file name
// (torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl): its
// version and the platform of its platform tag ("" for one GPU Canary
// keeps no arch lists for: macOS, Windows on ARM).
func ParseFileName(name string) (kb.Wheel, bool) {
	if !strings.HasPrefix(name, "torch-") || !strings.HasSuffix(name, ".whl") {
		return kb.Wheel{}, false
	}
	parts := strings.Split(strings.TrimSuffix(name, ".whl"), "-")
	if len(parts) != 5 && len(parts) != 6 { // name-version[-build]-py-abi-platform
		return kb.Wheel{}, false
	}
	w := kb.Wheel{Version: parts[1]}
	plat := parts[len(parts)-1]
	switch {
	case strings.Contains(plat, "linux") && strings.Contains(plat, "x86_64"):
		w.Platform = kb.PlatformLinuxX86
	case strings.Contains(plat, "linux") && strings.Contains(plat, "aarch64"):
		w.Platform = kb.PlatformLinuxARM
	case plat == "win_amd64":
		w.Platform = kb.PlatformWindows
	}
	return w, true
}
