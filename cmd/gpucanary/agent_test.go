package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

func TestAgentUsageErrors(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	badCfg := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(badCfg, []byte("tls_server_config:\n  cert_file: /nonexistent.pem\n  key_file: /nonexistent.key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"unknown flag", []string{"--web.listen", "x"}, "flag provided but not defined"},
		{"port in use", []string{"--web.listen-address", busy.Addr().String()}, "cannot listen on " + busy.Addr().String()},
		{"not an address", []string{"--web.listen-address", "nowhere:port"}, "cannot listen on"},
		{"missing web config", []string{"--web.config.file", filepath.Join(dir, "none.yml")}, "--web.config.file"},
		{"bad web config", []string{"--web.config.file", badCfg}, "--web.config.file"},
		{"textfile in a missing folder", []string{"--textfile", filepath.Join(dir, "no", "x.prom")}, "its folder does not exist"},
		{"missing environment", []string{filepath.Join(dir, "no-venv")}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, append([]string{"agent", "--web.listen-address", "127.0.0.1:0"}, tc.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.says) {
				t.Errorf("exit %d, want 2 saying %q; stderr:\n%s", code, tc.says, stderr)
			}
		})
	}
}

func TestAgentHelp(t *testing.T) {
	stdout, _, code := runCLI(t, "agent", "--help")
	if code != exitOK {
		t.Errorf("--help exits %d", code)
	}
	for _, want := range []string{"--web.listen-address", "--web.config.file", "--textfile", "--gpu-sim", "localhost:9835", "Loopback by", "Examples:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--help lacks %q:\n%s", want, stdout)
		}
	}
}

var servingOn = regexp.MustCompile(`serving metrics on (\S+)/metrics`)

// TestAgentServesAndWritesTheTextfile runs the agent as a user would: it
// serves the environment's metrics, is ready once it has read it, keeps the
// textfile beside, and stops cleanly on Ctrl-C.
func TestAgentServesAndWritesTheTextfile(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := filepath.Join(t.TempDir(), "proj", ".venv")
	if err := pyenvtest.Write(env, incidentsSpec("uv-cpu-overwrite")); err != nil {
		t.Fatal(err)
	}
	textfile := filepath.Join(t.TempDir(), "gpucanary.prom")
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--gpu-sim", simFile(t, simA100), "agent", "--web.listen-address", "127.0.0.1:0", "--textfile", textfile, env},
			stdio{in: strings.NewReader(""), out: io.Discard, err: pw})
		pw.Close()
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := servingOn.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not say where it serves within 30s")
	}
	client := &http.Client{Timeout: 30 * time.Second}
	get := func(path string) (int, string) {
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, _ := get("/-/ready"); c == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not ready within 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if c, _ := get("/-/healthy"); c != 200 {
		t.Errorf("/-/healthy: %d", c)
	}
	c, body := get("/metrics")
	for _, want := range []string{
		`gpucanary_env_torch_info{build="cpu",cuda="",env="` + env + `",torch_version="2.5.1+cpu"} 1`,
		`gpucanary_env_findings{code="TORCH_CPU_BUILD",env="` + env + `",severity="error"} 1`,
		`gpucanary_gpu_driver_info{backend="sim",cuda_driver="12.4",driver="550.54.15"} 1`,
		"gpucanary_ready 1",
		"process_resident_memory_bytes",
	} {
		if c != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %s", c, want)
		}
	}
	// The textfile carries GPU Canary's metrics (and not the agent's own
	// go_ and process_ ones, which would clash with node_exporter's).
	deadline = time.Now().Add(30 * time.Second)
	var file []byte
	for {
		file, _ = os.ReadFile(textfile)
		if strings.Contains(string(file), `gpucanary_env_torch_info{build="cpu"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the textfile was not written within 30s:\n%s", file)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if strings.Contains(string(file), "process_") || strings.Contains(string(file), "go_goroutines") {
		t.Errorf("the textfile carries the agent's own metrics:\n%s", file)
	}

	cancel()
	select {
	case c := <-code:
		if c != exitOK {
			t.Errorf("exit %d after Ctrl-C", c)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not stop on Ctrl-C")
	}
	if _, err := client.Get(base + "/metrics"); err == nil {
		t.Error("still serving after it stopped")
	}
}

func TestCheckFormatProm(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	env := filepath.Join(t.TempDir(), ".venv")
	if err := pyenvtest.Write(env, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	sim := simFile(t, simA100)
	line := `gpucanary_env_torch_info{build="cuda",cuda="12.1",env="` + env + `",torch_version="2.5.1+cu121"} 1`

	out, stderr, code := runCLI(t, "--gpu-sim", sim, "check", "--format", "prom", env)
	if code != exitOK || !strings.Contains(out, line) || !strings.Contains(out, "gpucanary_discovery_incomplete 0") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if strings.Contains(out, "go_goroutines") {
		t.Error("check's metrics carry the Go runtime's")
	}

	textfile := filepath.Join(t.TempDir(), "gpucanary.prom")
	out, stderr, code = runCLI(t, "--gpu-sim", sim, "check", env, "--format", "prom", "--textfile", textfile)
	if code != exitOK || out != "" {
		t.Fatalf("exit %d, stdout %q\n%s", code, out, stderr)
	}
	if b, err := os.ReadFile(textfile); err != nil || !strings.Contains(string(b), line) {
		t.Errorf("textfile: %v\n%s", err, b)
	}

	for _, args := range [][]string{{"--format", "yaml"}, {"--textfile", textfile}} {
		if _, _, code := runCLI(t, append([]string{"--gpu-sim", sim, "check", env}, args...)...); code != exitUsage {
			t.Errorf("check %v: exit %d, want 2", args, code)
		}
	}
	// --format json is --json.
	if out, _, _ := runCLI(t, "--gpu-sim", sim, "check", "--format", "json", env); !strings.HasPrefix(out, "{") {
		t.Errorf("--format json printed:\n%.200s", out)
	}
}
