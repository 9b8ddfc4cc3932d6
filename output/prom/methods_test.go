package prom

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestOnlyGetAndHead: the agent's pages answer GET and HEAD; every other
// method gets 405 with an Allow header, over a real connection (CONNECT
// and TRACE included, which net/http's client does not send as a page
// request) (issue 32, L16).
func TestOnlyGetAndHead(t *testing.T) {
	addr := serve(t, "")
	for _, path := range []string{"/metrics", "/-/healthy", "/-/ready", "/"} {
		for _, c := range []struct {
			method string
			code   int
		}{
			{"GET", 200}, {"HEAD", 200},
			{"POST", 405}, {"PUT", 405}, {"DELETE", 405}, {"PATCH", 405}, {"OPTIONS", 405}, {"TRACE", 405}, {"CONNECT", 405},
		} {
			code, allow := rawRequest(t, addr, c.method, path)
			if path == "/-/ready" && c.code == 200 && code == 503 {
				continue // not ready yet: the method was taken all the same
			}
			if code != c.code {
				t.Errorf("%s %s = %d, want %d", c.method, path, code, c.code)
			}
			if c.code == 405 && allow != "GET, HEAD" {
				t.Errorf("%s %s: Allow = %q, want \"GET, HEAD\"", c.method, path, allow)
			}
		}
	}
}

// rawRequest sends one request written by hand (CONNECT's target is the
// path here, as a scanner sends it) and returns the status and the
// Allow header.
func rawRequest(t *testing.T, addr, method, path string) (int, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	target := path
	if method == "CONNECT" {
		target = addr
	}
	if _, err := io.WriteString(conn, method+" "+target+" HTTP/1.1\r\nHost: "+addr+"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	req := &http.Request{Method: method}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, strings.TrimSpace(resp.Header.Get("Allow"))
}
