// Package kbrefresh teaches GPU Canary's knowledge base (monitor/kb) the
// torch releases and CUDA variants a PyTorch wheel index lists, without a
// rebuild: it reads the index's torch page (PEP 503 simple HTML), and
// writes what it shows beyond the embedded tables as the refresh overlay
// (kb.RefreshOverlayPath). It runs when asked (`gpucanary kb refresh`)
// or, when the kb_refresh setting turns it on, at most daily in the
// engine; never on its own otherwise.
package kbrefresh

import (
	"bufio"
	"bytes"
	"compress/gzip"
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
	"sync"
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
	// Page is the page read; Wheels how many distinct torch wheels
	// (version and platform) it listed that were learned from.
	Page   string
	Wheels int
	// Dropped are the versions it listed that no release pattern allows
	// (bounds), each with why: not learned.
	Dropped []string
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
	wheels, dropped, err := FetchAll(ctx, client, page)
	if err != nil {
		return res, err
	}
	res.Wheels, res.Dropped = len(wheels), dropped
	if len(wheels) == 0 {
		more := ""
		if len(dropped) > 0 {
			more = fmt.Sprintf(" but %d versions no torch release pattern allows (%s)", len(dropped), dropped[0])
		}
		return res, fmt.Errorf("reading %s: it lists no torch wheels%s (is it a PyTorch wheel index?); the knowledge overlay was left as it was", page, more)
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

// maxRatio bounds how much the page may grow when decompressed: a torch
// page is file names and random sha256 digests, which gzip shrinks three
// to five times; a stream that grows by more than this is a gzip bomb
// and is stopped long before maxPage of it is made.
const maxRatio = 100

// ratioFrom is how much of a page is read before maxRatio applies: the
// first links of a real page (a header, repeated markup) may compress
// better than the rest.
const ratioFrom = 256 << 10

// FetchAll reads a PEP 503 torch page and returns the plausible wheels it
// lists (the versions bounds allows) and the versions it dropped, each
// with why. The page is read as a stream, never whole: the bytes on the wire
// are capped at maxPage before they are decompressed, the decompressed
// stream is capped at maxPage and at maxRatio times the bytes read, and
// each link is parsed as it arrives. Redirects are followed only to the
// same host (and never from https to http): the index named is the one
// read.
func FetchAll(ctx context.Context, client *http.Client, page string) ([]kb.Wheel, []string, error) {
	c := &http.Client{Timeout: Timeout, Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, DisableCompression: true}}
	if client != nil {
		cp := *client
		c = &cp
	}
	c.CheckRedirect = sameHost
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, page, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", page, err)
	}
	req.Header.Set("Accept", "text/html")
	// Asked for by name, so that the transport hands over the compressed
	// bytes (it decompresses unasked, and uncapped, only what it asked for).
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w%s", page, err, offlineHint(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("reading %s: the server answered %s", page, resp.Status)
	}
	wire := &capped{r: resp.Body, max: maxPage, what: "the page as sent"}
	var body io.Reader = wire
	switch enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(wire)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: its gzip stream: %w", page, err)
		}
		body = &capped{r: zr, max: maxPage, what: "the decompressed page", ratioOf: wire}
	default:
		return nil, nil, fmt.Errorf("reading %s: it is sent in an encoding GPU Canary does not read (%s)", page, enc)
	}
	w, dropped, err := parseStream(body)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w%s", page, err, offlineHint(err))
	}
	return w, dropped, nil
}

// sameHost is the redirect policy: the same scheme and host (port
// included) as the first request, at most ten times.
func sameHost(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	switch {
	case len(via) >= 10:
		return errors.New("more than 10 redirects")
	case req.URL.Host != first.Host:
		return fmt.Errorf("it redirects to another host (%s), which is not followed: name the index you mean with --index-url", req.URL.Host)
	case first.Scheme == "https" && req.URL.Scheme != "https":
		return errors.New("it redirects from https to http, which is not followed")
	}
	return nil
}

// errTooLarge is a page over a cap.
var errTooLarge = errors.New("the page is too large")

// capped reads r up to max bytes, then fails; with ratioOf, it also fails
// once it has given more than maxRatio times what ratioOf has read (past
// the first ratioFrom bytes, so that a small page is never judged by its
// ratio).
type capped struct {
	r       io.Reader
	max, n  int64
	what    string
	ratioOf *capped
}

func (c *capped) Read(p []byte) (int, error) {
	if int64(len(p)) > c.max-c.n+1 {
		p = p[:c.max-c.n+1]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	switch {
	case c.n > c.max:
		return n, fmt.Errorf("%w: %s is over %d MB", errTooLarge, c.what, c.max>>20)
	case c.ratioOf != nil && c.n > ratioFrom && c.n > maxRatio*c.ratioOf.n:
		return n, fmt.Errorf("%w: %s grows more than %d times from what was sent (a gzip bomb?)", errTooLarge, c.what, maxRatio)
	}
	return n, err
}

// maxLink bounds one link of the page, and what lies between two: a
// link is a file name, a URL and a digest, a few hundred bytes.
const maxLink = 64 << 10

// parseStream reads the links of a page as they arrive (a link at a time,
// split at "</a>"), keeping each plausible torch wheel once.
func parseStream(r io.Reader) ([]kb.Wheel, []string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLink)
	sc.Split(splitLinks)
	k := knownFacts()
	seen := map[kb.Wheel]bool{}
	why := map[string]string{}
	var out []kb.Wheel
	var dropped []string
	for sc.Scan() {
		tok := sc.Bytes()
		if !bytes.Contains(tok, []byte(".whl")) {
			continue // no wheel's name: no need to parse it
		}
		for _, w := range parseLink(tok) {
			if seen[w] {
				continue
			}
			if _, done := why[w.Version]; done {
				continue
			}
			if reason := k.plausible(w.Version); reason != "" {
				why[w.Version] = reason
				dropped = append(dropped, w.Version+": "+reason)
				continue
			}
			seen[w] = true
			out = append(out, w)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("%w: a part of it without a link end is over %d KB, which no index page has", errTooLarge, maxLink>>10)
		}
		return nil, nil, err
	}
	return out, dropped, nil
}

// parseLink is Parse for one link (a token of splitLinks): the common
// case, a link whose text is the wheel's file name, is read without the
// regular expression, which would cost a page of thousands of links an
// allocation each.
func parseLink(tok []byte) []kb.Wheel {
	end := indexFold(tok, "</a>")
	if end >= 0 {
		if gt := bytes.LastIndexByte(tok[:end], '>'); gt >= 0 {
			name := strings.TrimSpace(html.UnescapeString(string(tok[gt+1 : end])))
			if strings.HasSuffix(name, ".whl") && !strings.ContainsAny(name, "<>") {
				if w, ok := ParseFileName(name); ok {
					return []kb.Wheel{w}
				}
				return nil
			}
		}
	}
	return Parse(string(tok))
}

// splitLinks splits a page after each "</a>" (any case).
func splitLinks(data []byte, atEOF bool) (int, []byte, error) {
	if i := indexFold(data, "</a>"); i >= 0 {
		return i + 4, data[:i+4], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// indexFold finds sub (ASCII, starting with a byte that has no case) in
// b, ignoring case.
func indexFold(b []byte, sub string) int {
	for off := 0; ; {
		i := bytes.IndexByte(b[off:], sub[0])
		if i < 0 {
			return -1
		}
		i += off
		if i+len(sub) > len(b) {
			return -1
		}
		if bytes.EqualFold(b[i:i+len(sub)], []byte(sub)) {
			return i
		}
		off = i + 1
	}
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
//
// Compiled at first use, not at each start of the program (a check's
// start does not pay for it).
var anchor = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?is)<a\s[^>]*href\s*=\s*["']([^"']*)["'][^>]*>(.*?)</a>`)
})

// Parse reads the torch wheels a PEP 503 page links to, by file name:
// the link's text, else the last part of its href.
func Parse(page string) []kb.Wheel {
	var out []kb.Wheel
	for _, m := range anchor().FindAllStringSubmatch(page, -1) {
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
