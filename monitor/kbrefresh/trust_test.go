package kbrefresh

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

var day = time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)

// TestRedirectsStayOnTheHost is issue 42's item 12: a redirect to another
// host (another port of 127.0.0.1 is another host) is refused, and the
// other host is never asked; one on the same host is followed.
func TestRedirectsStayOnTheHost(t *testing.T) {
	var otherAsked bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherAsked = true
		w.Write([]byte(page))
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away/torch/":
			http.Redirect(w, r, other.URL+"/whl/torch/", http.StatusFound)
		case "/moved/torch/":
			http.Redirect(w, r, "/whl/torch/", http.StatusMovedPermanently)
		case "/whl/torch/":
			w.Write([]byte(page))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "kb-refresh.json")

	_, err := Run(context.Background(), srv.Client(), srv.URL+"/away", out, day)
	if err == nil || !strings.Contains(err.Error(), "another host") {
		t.Fatalf("a redirect to another host: %v; want it refused", err)
	}
	if otherAsked {
		t.Error("the other host was asked")
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an overlay was written from a refused redirect")
	}
	res, err := Run(context.Background(), srv.Client(), srv.URL+"/moved", out, day)
	if err != nil || res.Wheels == 0 {
		t.Fatalf("a redirect on the same host: %v, %+v", err, res)
	}
}

// TestGzipBombFailsFast: a page sent gzip-compressed that grows without
// end (zeros, or one link over and over) fails at once, having made
// little of it and held less.
func TestGzipBombFailsFast(t *testing.T) {
	for name, chunk := range map[string][]byte{
		"zeros": make([]byte, 1<<20),
		"links": []byte(strings.Repeat(`<a href="/x/torch-2.5.1%2Bcu124-cp312-cp312-linux_x86_64.whl">torch-2.5.1+cu124-cp312-cp312-linux_x86_64.whl</a>`, 8000)),
	} {
		t.Run(name, func(t *testing.T) { bomb(t, chunk) })
	}
}

// bomb serves chunk, gzip-compressed, over and over: one gzip member
// made once and sent again and again (a gzip stream may be many
// members), so that the server costs nothing while the client is timed.
func bomb(t *testing.T, chunk []byte) {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(chunk)
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		for n := 0; n < 4<<30 && r.Context().Err() == nil; n += len(chunk) { // 4 GB decompressed
			if _, err := w.Write(member.Bytes()); err != nil {
				return // the client hung up
			}
		}
	}))
	defer srv.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, _, err := FetchAll(context.Background(), srv.Client(), srv.URL+"/whl/torch/")
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errTooLarge) {
		t.Fatalf("a gzip bomb: %v; want it refused as too large", err)
	}
	if testing.Verbose() {
		t.Log(err)
	}
	if took > 2*time.Second {
		t.Errorf("a gzip bomb took %s to refuse", took)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("reading a gzip bomb allocated %d MB", alloc>>20)
	}
}

// TestPageOverTheCap: a page that is all links is read as a stream and
// stopped at the cap, in bounded memory.
func TestPageOverTheCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := []byte(`<a href="/x">` + strings.Repeat("y", 60000) + "</a>\n")
		for n := 0; n < maxPage+len(line) && r.Context().Err() == nil; n += len(line) {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, err := FetchAll(context.Background(), srv.Client(), srv.URL+"/whl/torch/")
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errTooLarge) {
		t.Fatalf("a page over %d MB: %v", maxPage>>20, err)
	}
	if after.HeapInuse > before.HeapInuse+16<<20 {
		t.Errorf("the heap grew by %d MB reading the page", (after.HeapInuse-before.HeapInuse)>>20)
	}
}

// TestImplausibleVersionsAreNotLearned: torch 2.49.6 and a cu139 build
// are no release a pattern allows; they are dropped with why, and the
// rest of the page is learned.
func TestImplausibleVersionsAreNotLearned(t *testing.T) {
	p := `<a href="/whl/cu132/torch-2.49.6%2Bcu132-cp312-cp312-manylinux_2_28_x86_64.whl">torch-2.49.6+cu132-cp312-cp312-manylinux_2_28_x86_64.whl</a>
<a href="/whl/cu139/torch-2.16.0%2Bcu139-cp312-cp312-manylinux_2_28_x86_64.whl">torch-2.16.0+cu139-cp312-cp312-manylinux_2_28_x86_64.whl</a>
<a href="/whl/cu132/torch-2.15.17%2Bcu132-cp312-cp312-manylinux_2_28_x86_64.whl">torch-2.15.17+cu132-cp312-cp312-manylinux_2_28_x86_64.whl</a>
<a href="/whl/cu132/torch-1.14.0%2Bcu132-cp312-cp312-manylinux_2_28_x86_64.whl">torch-1.14.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl</a>
<a href="/whl/cu132/torch-2.16.0%2Bcu132-cp312-cp312-manylinux_2_28_x86_64.whl">torch-2.16.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl</a>
<a href="/whl/cu134/torch-2.16.0%2Bcu134-cp312-cp312-manylinux_2_28_x86_64.whl">torch-2.16.0+cu134-cp312-cp312-manylinux_2_28_x86_64.whl</a>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(p)) }))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "kb-refresh.json")
	res, err := Run(context.Background(), srv.Client(), srv.URL+"/whl", out, day)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.News, " | "); got != "torch 2.16 (2.16.0): cu132, cu134" {
		t.Errorf("News = %q", got)
	}
	dropped := strings.Join(res.Dropped, "\n")
	for _, v := range []string{"2.49.6+cu132", "2.16.0+cu139", "2.15.17+cu132", "1.14.0+cu132"} {
		if !strings.Contains(dropped, v+": ") {
			t.Errorf("%s not dropped:\n%s", v, dropped)
		}
	}
	b, _ := os.ReadFile(out)
	for _, bad := range []string{"2.49", "cu139", "2.15.17", "1.14"} {
		if strings.Contains(string(b), bad) {
			t.Errorf("the overlay learned %s:\n%s", bad, b)
		}
	}
}
