//go:build linux

package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestAgentAtALowFileLimit runs the agent with 128 file descriptors (soft
// and hard, so Go cannot raise it) and holds 400 idle connections to it,
// more than it may open: /metrics still answers at once, the engine
// still reads its environment, and nothing is reported unreadable.
func TestAgentAtALowFileLimit(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to set the file limit with")
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := filepath.Join(t.TempDir(), "proj", ".venv")
	if err := pyenvtest.Write(env, incidentsSpec("uv-cpu-overwrite")); err != nil {
		t.Fatal(err)
	}
	prog := programCommand(t)
	cmd := exec.Command("sh", "-c", `ulimit -n 128 && exec "$@"`, "sh", prog.Path,
		"--gpu-sim", simFile(t, simA100), "agent", "--web.listen-address", "127.0.0.1:0", env)
	cmd.Env = prog.Env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingOn.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	var host string
	select {
	case host = <-addr:
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not say where it serves within 30s")
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(path string) (int, string, error) {
		resp, err := client.Get("http://" + host + path)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, _, _ := get("/-/ready"); c == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not ready within 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}

	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range 400 {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatalf("connecting idle client %d: %v", len(idle), err)
		}
		idle = append(idle, c)
	}
	for i := range 3 {
		c, body, err := get("/metrics")
		if err != nil {
			t.Fatalf("scrape %d with 400 idle clients at a limit of 128 files: %v", i, err)
		}
		if c != 200 || !strings.Contains(body, `gpucanary_env_torch_info{build="cpu",cuda="",env="`+env+`"`) {
			t.Fatalf("scrape %d: %d\n%.400s", i, c, body)
		}
		if strings.Contains(body, "ENV_UNREADABLE") {
			t.Errorf("scrape %d reports an environment unreadable:\n%s", i, body)
		}
	}
}
