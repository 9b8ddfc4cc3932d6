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
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
	"github.com/gpucanary/gpucanary/output/prom"
)

// The agent's flags and help name output/prom's defaults without importing it.
func TestAgentDefaultsArePrometheus(t *testing.T) {
	if agentListenDefault != prom.DefaultListenAddress || agentProcessesMax != prom.DefaultProcessSeriesMax {
		t.Errorf("agent defaults %q, %d; output/prom's %q, %d",
			agentListenDefault, agentProcessesMax, prom.DefaultListenAddress, prom.DefaultProcessSeriesMax)
	}
}

// networkPackages are what the lean build leaves out: the code behind
// agent, kb refresh and check --format prom, which doubled the memory
// of every start (issue 34).
var networkPackages = []string{
	"net/http",
	"crypto/tls",
	"runtime/pprof",
	"github.com/prometheus/client_golang/prometheus",
	"google.golang.org/protobuf/proto",
	"github.com/gpucanary/gpucanary/output/prom",
	"github.com/gpucanary/gpucanary/monitor/kbrefresh",
}

// TestLeanBuildLinksNoNetworkCode: -tags lean links none of
// networkPackages; the full build links them all (so the list is right).
func TestLeanBuildLinksNoNetworkCode(t *testing.T) {
	deps := func(tags string) []string {
		out, err := exec.Command("go", "list", "-deps", "-tags", tags, ".").Output()
		if err != nil {
			t.Fatalf("go list -tags %s: %v", tags, err)
		}
		return strings.Fields(string(out))
	}
	lean, full := deps("nogui,lean"), deps("nogui")
	for _, p := range networkPackages {
		if slices.Contains(lean, p) {
			t.Errorf("the lean build links %s", p)
		}
		if !slices.Contains(full, p) {
			t.Errorf("the full build does not link %s: networkPackages is out of date", p)
		}
	}
}

// leanPair builds the lean build into a folder, as make cli installs
// it, with this test binary beside it as the full build (it runs main()
// when runMainEnv is set, which the lean build passes on to what it
// runs, and holds every command's code): one binary linked, not two. It
// returns the lean one's path. TestLeanBuildLinksNoNetworkCode holds
// what the real full build links.
func leanPair(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a binary")
	}
	dir := t.TempDir()
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	args := append(append([]string{"build"}, buildRace...), "-tags", "nogui,lean", "-o", filepath.Join(dir, "gpucanary-cli"+exe), ".")
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go build -tags nogui,lean: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(dir, fullName+exe)
	if err := os.Symlink(self, full); err != nil { // Windows without the right: a copy
		data, rerr := os.ReadFile(self)
		if rerr != nil || os.WriteFile(full, data, 0o755) != nil {
			t.Fatalf("putting this test binary beside the lean build: %v", err)
		}
	}
	t.Setenv(runMainEnv, "1")
	return filepath.Join(dir, "gpucanary-cli"+exe)
}

// leanRun runs the lean build with args and a fresh config and state.
func leanRun(t *testing.T, cli string, args ...string) (stdout, stderr string, code int) {
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

// TestLeanHandsOverToFull: the lean build runs check itself, and hands
// check --format prom, kb refresh and the agent to gpucanary-full beside
// it; without it, those say what is missing and exit 2, and the rest
// still runs.
func TestLeanHandsOverToFull(t *testing.T) {
	cli := leanPair(t)
	env := filepath.Join(t.TempDir(), "proj", ".venv")
	if err := pyenvtest.Write(env, incidentsSpec("uv-cpu-overwrite")); err != nil {
		t.Fatal(err)
	}
	sim := simFile(t, simA100)

	out, stderr, code := leanRun(t, cli, "--gpu-sim", sim, "check", "--format", "prom", env)
	if code != 1 || !strings.Contains(out, "gpucanary_build_info{") || !strings.Contains(out, "gpucanary_env_findings") {
		t.Errorf("check --format prom: exit %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = leanRun(t, cli, "--gpu-sim", sim, "check", "--format", "prom", "--json", env)
	if code != 2 || !strings.Contains(stderr, "--json and --format prom") {
		t.Errorf("check --format prom --json, handed over: exit %d\n%s\n%s", code, out, stderr)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := "torch-2.16.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl"
		io.WriteString(w, `<a href="/whl/cu132/`+strings.ReplaceAll(f, "+", "%2B")+`#sha256=00">`+f+"</a>\n")
	}))
	defer srv.Close()
	out, stderr, code = leanRun(t, cli, "kb", "refresh", "--index-url", srv.URL+"/whl")
	if code != 0 || !strings.Contains(out, "Read 1 torch wheels") {
		t.Errorf("kb refresh: exit %d\n%s\n%s", code, out, stderr)
	}

	t.Run("agent", func(t *testing.T) { leanAgent(t, cli, sim, env) })
	t.Run("watch's kb refresh", func(t *testing.T) { leanWatchRefresh(t, cli, sim, env, srv.URL+"/whl") })

	if err := os.Remove(filepath.Join(filepath.Dir(cli), fullName+filepath.Ext(cli))); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"agent", "--web.listen-address", "127.0.0.1:0", env},
		{"kb", "refresh"},
		{"--gpu-sim", sim, "check", "--format", "prom", env},
	} {
		_, stderr, code := leanRun(t, cli, args...)
		if code != 2 || !strings.Contains(stderr, "to "+fullName+", which should be installed beside it") {
			t.Errorf("%v without %s: exit %d\n%s", args, fullName, code, stderr)
		}
	}
	out, stderr, code = leanRun(t, cli, "--gpu-sim", sim, "check", "--json", env)
	if code != 1 || !strings.Contains(out, `"envs"`) {
		t.Errorf("check --json without %s: exit %d\n%s\n%s", fullName, code, out, stderr)
	}
	if _, stderr, code = leanRun(t, cli, "agent", "--help"); code != 0 {
		t.Errorf("agent --help without %s: exit %d\n%s", fullName, code, stderr)
	}
}

// leanAgent runs the agent through the lean build: it serves metrics and
// stops on an interrupt, as the agent does.
func leanAgent(t *testing.T, cli, sim, env string) {
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

// leanWatchRefresh: watch with kb_refresh on has the full build refresh
// the knowledge at start (the engine's RefreshKnowledge).
func leanWatchRefresh(t *testing.T, cli, sim, env, index string) {
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
