package prom

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
)

func TestConnCap(t *testing.T) {
	for _, tc := range []struct {
		nofile uint64
		want   int
	}{
		{0, maxConns},        // not known
		{1 << 20, maxConns},  // Go raises the soft limit to the hard one
		{1024, maxConns},     // 1024 - 256 for the engine
		{128, 64},            // 64 kept for the engine
		{40, minConns},       // below the reserve
		{68, minConns},       // the reserve and the minimum
		{200, 200 - 64},      // a quarter is less than the reserve
		{400, min(300, 256)}, // a quarter kept
	} {
		if got := connCap(tc.nofile); got != tc.want {
			t.Errorf("connCap(%d) = %d, want %d", tc.nofile, got, tc.want)
		}
	}
}

// TestIdleClientsCannotKeepAScrapeOut: with the server capped at 4
// connections, 40 clients that connect and send nothing, and one that
// keeps its connection alive after a request, do not keep a scrape
// out: it is answered at once, and no more than 4 connections are ever
// open.
func TestIdleClientsCannotKeepAScrapeOut(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(HandlerOptions{Metrics: Options{State: func() monitor.State { return replacedState() }}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	opened := make(chan *limitListener, 1)
	go func() {
		done <- serveCapped(ctx, l, h, "", nil, 4, func(ll *limitListener) { opened <- ll })
	}()
	ll := <-opened
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve after cancel: %v", err)
		}
	})
	addr := l.Addr().String()

	// A keep-alive client: one request, then it holds the connection.
	kept, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	if _, err := io.WriteString(kept, "GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(kept), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range 40 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range 3 {
		resp, err := client.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatalf("scrape %d with 41 idle clients: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "gpucanary_env_torch_info") {
			t.Fatalf("scrape %d: %d\n%.300s", i, resp.StatusCode, body)
		}
		if n := ll.open(); n > 4 {
			t.Errorf("%d connections open; the cap is 4", n)
		}
	}
	// The keep-alive client was the longest idle: it was closed.
	kept.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := kept.Read(make([]byte, 1)); err == nil {
		t.Error("the kept-alive connection is still open")
	}
}

// open is how many connections are open.
func (l *limitListener) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}
