//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

const a100 = `{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-0000", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960, "processes": []}]}`

// waitLimit bounds every wait for a condition; each is polled, never slept
// through.
const waitLimit = 90 * time.Second

// TestAlertFiresAndResolves: a venv with a CUDA torch, watched by a real
// agent, scraped every second by a real Prometheus with the shipped rules.
// Real pip overwrites torch with the CPU build: GPUCanaryCUDATorchReplaced
// fires with the environment's label. `gpucanary fix` repairs it: the
// alert resolves.
func TestAlertFiresAndResolves(t *testing.T) {
	bin := os.Getenv("GPUCANARY_CLI")
	if bin == "" {
		t.Fatal("run through scripts/test-prom.sh: GPUCANARY_CLI names the agent binary")
	}
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus is not installed (make deps-test installs Debian's)")
	}
	rules, err := filepath.Abs(filepath.Join("..", "gpucanary.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}

	// A local PyTorch-style index on loopback, and the venv.
	py := wheeltest.Python(t)
	idx := wheeltest.NewIndex(t.TempDir())
	for _, tag := range []string{"cpu", "cu121", "cu124"} {
		if err := idx.Add(tag, wheeltest.Torch("2.5.1", tag)); err != nil {
			t.Fatal(err)
		}
	}
	index := httptest.NewServer(idx)
	t.Cleanup(index.Close)
	home := t.TempDir()
	venv := filepath.Join(home, "llm", ".venv")
	wheeltest.NewVenv(t, py, venv)
	wheeltest.Pip(t, py, venv, "install", "--index-url", index.URL+"/cu121", "torch==2.5.1+cu121")
	sim := filepath.Join(t.TempDir(), "gpu.json")
	if err := os.WriteFile(sim, []byte(a100), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"), "NO_COLOR=1")

	agent := start(t, "agent", env, bin, "--gpu-sim", sim, "agent", "--web.listen-address", "127.0.0.1:0", venv)
	agentAddr := agent.waitLog(t, regexp.MustCompile(`serving metrics on (127\.0\.0\.1:\d+)/metrics`))
	waitFor(t, "the agent to be ready", func() (bool, string) {
		code, body := get(t, "http://"+agentAddr+"/-/ready")
		return code == 200, body
	})

	dir := t.TempDir()
	config := filepath.Join(dir, "prometheus.yml")
	os.WriteFile(config, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: gpucanary
    static_configs:
      - targets: [%q]
`, rules, agentAddr)), 0o644)
	prom := start(t, "prometheus", os.Environ(), promBin, "--config.file="+config, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:0", "--log.level=info")
	promAddr := prom.waitLog(t, regexp.MustCompile(`msg="Listening on" address=(127\.0\.0\.1:\d+)`))
	api := "http://" + promAddr + "/api/v1/"

	// Prometheus has the CUDA build, and the alert does not fire.
	waitFor(t, "Prometheus to scrape the CUDA build", func() (bool, string) {
		n, body := query(t, api, `gpucanary_env_torch_info{build="cuda",env="`+venv+`"}`)
		return n == 1, body
	})
	seen := time.Now()
	waitFor(t, "the rules to be evaluated on that", func() (bool, string) {
		at, body := lastEvaluation(t, api)
		return at.After(seen), body
	})
	if a, body := alert(t, api, venv); a != nil {
		t.Fatalf("the alert fires before anything was replaced:\n%s", body)
	}

	// uv/pip replaces torch with the CPU build.
	wheeltest.Pip(t, py, venv, "install", "--force-reinstall", "--index-url", index.URL+"/cpu", "torch==2.5.1+cpu")
	var fired map[string]any
	waitFor(t, "GPUCanaryCUDATorchReplaced to fire with the environment's label", func() (bool, string) {
		a, body := alert(t, api, venv)
		fired = a
		return a != nil && a["state"] == "firing", body
	})
	labels, _ := fired["labels"].(map[string]any)
	ann, _ := fired["annotations"].(map[string]any)
	summary, _ := ann["summary"].(string)
	if labels["build"] != "cpu" || labels["instance"] != agentAddr || !strings.Contains(summary, agentAddr) ||
		!strings.Contains(summary, venv) || !strings.Contains(summary, "gpucanary fix "+venv) {
		t.Errorf("the firing alert: labels %v, summary %q", labels, summary)
	}

	// The fix command repairs it, and the alert resolves.
	fix := exec.Command(bin, "--gpu-sim", sim, "fix", "--yes", "--index-base", index.URL, venv)
	fix.Env = env
	if out, err := fix.CombinedOutput(); err != nil {
		t.Fatalf("gpucanary fix: %v\n%s", err, out)
	}
	waitFor(t, "the alert to resolve after the fix", func() (bool, string) {
		a, body := alert(t, api, venv)
		return a == nil, body
	})
	if n, body := query(t, api, `gpucanary_env_torch_info{build="cuda",torch_version="2.5.1+cu124",env="`+venv+`"}`); n != 1 {
		t.Errorf("Prometheus does not have the repaired build:\n%s", body)
	}
}

// proc is a started program whose log is kept for matching and for the
// failure message.
type proc struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  bytes.Buffer
	line chan struct{}
}

// start runs a program until the test ends: then it is sent SIGTERM and,
// if it has not exited 10 s later, killed.
func start(t *testing.T, name string, env []string, path string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(path, args...), line: make(chan struct{}, 1)}
	p.cmd.Env = env
	r, w := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	exited := make(chan struct{})
	go func() {
		p.cmd.Wait()
		w.Close()
		close(exited)
	}()
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			p.mu.Lock()
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.line <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Errorf("%s did not stop 10s after SIGTERM; killed", name)
			p.cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("%s's log:\n%s", name, p.logText())
		}
	})
	return p
}

func (p *proc) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// waitLog waits for a log line matching re and returns its first group.
func (p *proc) waitLog(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		if m := re.FindStringSubmatch(p.logText()); m != nil {
			return m[1]
		}
		select {
		case <-p.line:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatalf("%s did not log %s within %s:\n%s", p.name, re, waitLimit, p.logText())
		}
	}
}

// waitFor polls cond until it holds; past waitLimit the test fails with
// cond's last word.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s; last answer:\n%s", waitLimit, what, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var client = &http.Client{Timeout: 10 * time.Second}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := client.Get(u)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// query runs an instant query and returns how many series it gave.
func query(t *testing.T, api, q string) (int, string) {
	t.Helper()
	code, body := get(t, api+"query?query="+url.QueryEscape(q))
	if code != 200 {
		return 0, body
	}
	var r struct {
		Data struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("query %s: %v\n%s", q, err, body)
	}
	return len(r.Data.Result), body
}

// alert returns the GPUCanaryCUDATorchReplaced alert about env (pending
// or firing), or nil.
func alert(t *testing.T, api, env string) (map[string]any, string) {
	t.Helper()
	code, body := get(t, api+"alerts")
	if code != 200 {
		return nil, body
	}
	var r struct {
		Data struct {
			Alerts []map[string]any `json:"alerts"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("alerts: %v\n%s", err, body)
	}
	for _, a := range r.Data.Alerts {
		l, _ := a["labels"].(map[string]any)
		if l["alertname"] == "GPUCanaryCUDATorchReplaced" && l["env"] == env {
			return a, body
		}
	}
	return nil, body
}

// lastEvaluation is when Prometheus last evaluated the CUDA-replaced rule.
func lastEvaluation(t *testing.T, api string) (time.Time, string) {
	t.Helper()
	code, body := get(t, api+"rules")
	if code != 200 {
		return time.Time{}, body
	}
	var r struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name           string    `json:"name"`
					Health         string    `json:"health"`
					LastEvaluation time.Time `json:"lastEvaluation"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("rules: %v\n%s", err, body)
	}
	for _, g := range r.Data.Groups {
		for _, rule := range g.Rules {
			if rule.Name == "GPUCanaryCUDATorchReplaced" && rule.Health == "ok" {
				return rule.LastEvaluation, body
			}
		}
	}
	return time.Time{}, body
}
