package kbrefresh

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/kb"
)

// page is a torch page as download.pytorch.org writes it: links to
// /whl/TAG/ files, "+" escaped in the href, the file name as the text.
const page = `<!DOCTYPE html>
<html><body><h1>Links for torch</h1>
<a href="/whl/cu132/torch-2.16.0%2Bcu132-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=ab">torch-2.16.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl</a><br/>
<a href="/whl/cu130/torch-2.16.0%2Bcu130-cp312-cp312-manylinux_2_28_aarch64.whl#sha256=cd">torch-2.16.0+cu130-cp312-cp312-manylinux_2_28_aarch64.whl</a><br/>
<a href="/whl/cu130/torch-2.16.0%2Bcu130-cp312-cp312-win_amd64.whl#sha256=ef" data-requires-python="&gt;=3.10"></a><br/>
<a href="/whl/cpu/torch-2.16.0-cp312-none-macosx_11_0_arm64.whl">torch-2.16.0-cp312-none-macosx_11_0_arm64.whl</a><br/>
<a href="/whl/cu132/torch-2.14.0%2Bcu132-cp312-cp312-manylinux_2_28_x86_64.whl">torch-2.14.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl</a><br/>
<a href="/whl/torchvision-0.31.0-py3-none-any.whl">torchvision-0.31.0-py3-none-any.whl</a><br/>
</body></html>`

func TestRunAgainstALocalIndex(t *testing.T) {
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.URL.Path
		if r.URL.Path != "/whl/torch/" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(page))
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "gpucanary", "kb-refresh.json")
	res, err := Run(context.Background(), srv.Client(), srv.URL+"/whl/", out, time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if asked != "/whl/torch/" || res.Wheels != 5 {
		t.Errorf("asked %s, read %d wheels", asked, res.Wheels)
	}
	if got := strings.Join(res.News, " | "); got != "torch 2.16 (2.16.0): cu130, cu132" {
		t.Errorf("News = %q", got)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"minor": "2.16"`, `"linux-aarch64"`, `"windows-x86_64"`, "read from " + srv.URL + "/whl/torch/ on 2026-11-26"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("overlay lacks %s:\n%s", want, b)
		}
	}
}

func TestParseFileName(t *testing.T) {
	for name, want := range map[string]kb.Wheel{
		"torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl":   {Version: "2.15.0+cu132", Platform: kb.PlatformLinuxX86},
		"torch-2.15.0+cu130-cp313-cp313t-manylinux_2_28_aarch64.whl": {Version: "2.15.0+cu130", Platform: kb.PlatformLinuxARM},
		"torch-2.15.0+cu130-cp312-cp312-win_amd64.whl":               {Version: "2.15.0+cu130", Platform: kb.PlatformWindows},
		"torch-2.15.0-cp312-none-macosx_11_0_arm64.whl":              {Version: "2.15.0"},
		"torch-1.0.0-1-cp37-cp37m-linux_x86_64.whl":                  {Version: "1.0.0", Platform: kb.PlatformLinuxX86},
	} {
		if got, ok := ParseFileName(name); !ok || got != want {
			t.Errorf("ParseFileName(%s) = %+v, %v", name, got, ok)
		}
	}
	for _, name := range []string{"torchvision-0.31.0-py3-none-any.whl", "torch-2.15.0.tar.gz", "torch-2.15.0.whl"} {
		if _, ok := ParseFileName(name); ok {
			t.Errorf("ParseFileName(%s) ok", name)
		}
	}
}

func TestRunSaysWhatWentWrong(t *testing.T) {
	notIndex := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>hello</html>")) }))
	defer notIndex.Close()
	missing := httptest.NewServer(http.NotFoundHandler())
	defer missing.Close()
	// A port nothing listens on: what an offline machine sees. Taken
	// after the servers above, which would otherwise be given the same
	// port once it is closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	out := filepath.Join(t.TempDir(), "kb-refresh.json")
	for _, tt := range []struct{ index, want string }{
		{closed, "offline? GPU Canary goes on with what it knew"},
		{notIndex.URL, "lists no torch wheels"},
		{missing.URL, "404 Not Found"},
		{"ftp://x", "not an http(s) URL"},
	} {
		_, err := Run(context.Background(), nil, tt.index, out, time.Now())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Run(%s) = %v, want %q", tt.index, err, tt.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed refresh wrote the overlay")
	}
}

// TestRunGivesUpOnASilentIndex: an index that never answers is given up
// on when the deadline passes, and said so.
func TestRunGivesUpOnASilentIndex(t *testing.T) {
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer silent.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := Run(ctx, nil, silent.URL, filepath.Join(t.TempDir(), "kb-refresh.json"), time.Now())
	if err == nil || !strings.Contains(err.Error(), "no answer within") {
		t.Errorf("Run = %v", err)
	}
}
