package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestCLIBuildLinksNoGUI: the headless CLI (-tags nogui, make cli's
// bin/gpucanary-cli) links no Fyne package, so it runs on a server
// without libGL and libX11.
func TestCLIBuildLinksNoGUI(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "nogui", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps -tags nogui: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "fyne.io/") {
			t.Errorf("the nogui build links %s", p)
		}
	}
}

// TestBuildsLinkNoPrometheusLibraries: neither build links the Prometheus
// client library, the exporter toolkit or protobuf (output/prom writes
// the exposition and reads the web config itself). Their package
// initialisation (a default registry with its collectors, protobuf's
// registry, procfs, YAML, html/template) ran at every start of every
// command, `version` and `check` included: about 10 ms and 5 MB of peak
// memory on each run of the one CLI (docs/performance.md). Tests may
// still use them; test imports do not reach the binary.
func TestBuildsLinkNoPrometheusLibraries(t *testing.T) {
	for _, tags := range []string{"nogui", ""} {
		out, err := exec.Command("go", "list", "-deps", "-tags", tags, ".").Output()
		if err != nil {
			t.Fatalf("go list -deps -tags %q: %v", tags, err)
		}
		for _, p := range strings.Fields(string(out)) {
			for _, heavy := range []string{"github.com/prometheus/", "google.golang.org/protobuf/", "go.yaml.in/yaml/", "github.com/mwitkow/go-conntrack"} {
				if strings.HasPrefix(p, heavy) {
					t.Errorf("the build with tags %q links %s", tags, p)
				}
			}
		}
	}
}

// cliBuild builds the headless CLI as make cli does, alone in a folder:
// every command runs from this one program, with nothing beside it.
func cliBuild(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a binary")
	}
	exe := "gpucanary-cli"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	path := filepath.Join(t.TempDir(), exe)
	args := append(append([]string{"build"}, buildRace...), "-tags", "nogui", "-o", path, ".")
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go build -tags nogui: %v\n%s", err, out)
	}
	return path
}

// cliRun runs the CLI with args and a fresh config and state.
func cliRun(t *testing.T, cli string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(cli, args...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir(), "NO_COLOR=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestCLIBuildRunsEveryCommand: the headless CLI, alone in its folder,
// runs check --format prom, kb refresh, the agent and watch's daily
// refresh itself (once they were handed to a second program).
func TestCLIBuildRunsEveryCommand(t *testing.T) {
	cli := cliBuild(t)
	env := filepath.Join(t.TempDir(), "proj", ".venv")
	if err := pyenvtest.Write(env, incidentsSpec("uv-cpu-overwrite")); err != nil {
		t.Fatal(err)
	}
	sim := simFile(t, simA100)

	out, stderr, code := cliRun(t, cli, "--gpu-sim", sim, "check", "--format", "prom", env)
	if code != 1 || !strings.Contains(out, "gpucanary_build_info{") || !strings.Contains(out, "gpucanary_env_findings") {
		t.Errorf("check --format prom: exit %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = cliRun(t, cli, "--gpu-sim", sim, "check", "--json", env)
	if code != 1 || !strings.Contains(out, `"envs"`) {
		t.Errorf("check --json: exit %d\n%s\n%s", code, out, stderr)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := "torch-2.16.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl"
		io.WriteString(w, `<a href="/whl/cu132/`+strings.ReplaceAll(f, "+", "%2B")+`#sha256=00">`+f+"</a>\n")
	}))
	defer srv.Close()
	out, stderr, code = cliRun(t, cli, "kb", "refresh", "--index-url", srv.URL+"/whl")
	if code != 0 || !strings.Contains(out, "Read 1 torch wheels") {
		t.Errorf("kb refresh: exit %d\n%s\n%s", code, out, stderr)
	}

	t.Run("agent", func(t *testing.T) { cliAgent(t, cli, sim, env) })
	t.Run("watch's kb refresh", func(t *testing.T) { cliWatchRefresh(t, cli, sim, env, srv.URL+"/whl") })
}

// cliAgent runs the CLI's agent: it serves metrics and stops on an
// interrupt.
func cliAgent(t *testing.T, cli, sim, env string) {
	if runtime.GOOS == "windows" {
		t.Skip("an interrupt is a console event on Windows")
	}
	cmd := exec.Command(cli, "--gpu-sim", sim, "agent", "--web.listen-address", "127.0.0.1:0", env)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingOn.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		close(addr)
	}()
	var base string
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatal("the agent ended without serving")
		}
		base = a
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not say where it serves within 30s")
	}
	if !strings.HasPrefix(base, "http") {
		base = "http://" + base
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "gpucanary_build_info{") {
		t.Errorf("/metrics:\n%s", body)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the agent, interrupted: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not stop on an interrupt")
	}
}

// cliWatchRefresh: watch with kb_refresh on refreshes the knowledge at
// start (the engine's RefreshKnowledge), in its own process.
func cliWatchRefresh(t *testing.T, cli, sim, env, index string) {
	config := t.TempDir()
	settings := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(settings, []byte("kb_refresh = true\nindex_base = \""+index+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cli, "--gpu-sim", sim, "--config", settings, "watch", env)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config, "XDG_STATE_HOME="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	overlay := filepath.Join(config, "gpucanary", "kb-refresh.json")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(overlay); err == nil && strings.Contains(string(b), "2.16") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no refresh overlay with torch 2.16 after 30s; watch said:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
