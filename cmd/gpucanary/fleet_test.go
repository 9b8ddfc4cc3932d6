//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// noSuchPID is above PID_MAX_LIMIT (4194304, include/linux/threads.h):
// no process ever has it.
const noSuchPID = 4194305

// fleetSim is an A100 whose driver lists pid holding 2 GiB, and
// noSuchPID holding 8 GiB: memory held by no live process.
func fleetSim(t *testing.T, pid int) string {
	return simFile(t, fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-0000", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960, "memory_used_bytes": 10737418240,
              "processes": [{"pid": %d, "type": "compute", "used_memory_bytes": 2147483648},
                            {"pid": %d, "type": "compute", "used_memory_bytes": 8589934592}]}]}`, pid, noSuchPID))
}

// startSleeper starts a real process for the simulated GPU to list.
func startSleeper(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// TestAgentPerProcessSeries: with --collector.processes, a simulated GPU
// process whose PID is a real process has its own series, with its
// container label (empty on the host); the 8 GiB the driver lists for a
// PID that does not exist is GPU_MEMORY_ORPHANED among the host's
// findings. Without the flag there are no per-process series.
func TestAgentPerProcessSeries(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := filepath.Join(t.TempDir(), "proj", ".venv")
	if err := pyenvtest.Write(env, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	pid := startSleeper(t)
	sim := fleetSim(t, pid)
	series := fmt.Sprintf(`gpucanary_process_gpu_memory_bytes{container="",env="",namespace="",pid="%d",pod="",verdict="gpu"} 2.147483648e+09`, pid)
	for _, tc := range []struct {
		flags []string
		want  []string
		not   []string
	}{
		{[]string{"--collector.processes"}, []string{series, "gpucanary_process_series_dropped_total 0",
			`gpucanary_host_findings{code="GPU_MEMORY_ORPHANED",severity="warning"} 1`}, nil},
		// Capped at one: the 8 GiB orphan (a PID that is not running:
		// orphaned) comes first, the sleeper is dropped.
		{[]string{"--collector.processes", "--collector.processes.max", "1"}, []string{
			fmt.Sprintf(`gpucanary_process_gpu_memory_bytes{container="",env="",namespace="",pid="%d",pod="",verdict="orphaned"} 8.589934592e+09`, noSuchPID),
			"gpucanary_process_series_dropped_total "}, []string{series}},
		{nil, []string{`gpucanary_host_findings{code="GPU_MEMORY_ORPHANED",severity="warning"} 1`}, []string{"gpucanary_process_"}},
	} {
		t.Run(strings.Join(tc.flags, " "), func(t *testing.T) {
			args := append([]string{"--gpu-sim", sim, "agent", "--web.listen-address", "127.0.0.1:0"}, tc.flags...)
			body := agentMetricsUntil(t, append(args, env), tc.want)
			for _, not := range tc.not {
				if strings.Contains(body, not) {
					t.Errorf("/metrics has %s:\n%s", not, body)
				}
			}
		})
	}
}

// agentMetricsUntil runs the agent with args until its /metrics holds
// every line of want (30 s at most), and returns that page.
func agentMetricsUntil(t *testing.T, args []string, want []string) string {
	t.Helper()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, args, stdio{in: strings.NewReader(""), out: io.Discard, err: pw})
		pw.Close()
	}()
	defer func() {
		cancel()
		if c := <-code; c != exitOK {
			t.Errorf("agent exit %d", c)
		}
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
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := client.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body, missing := string(b), ""
		for _, w := range want {
			if !strings.Contains(body, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics lacks %s after 30s:\n%s", missing, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPsAndCheckOrphanedMemory: ps --json lists each process's container
// (null on the host) and the machine's GPU_MEMORY_ORPHANED, naming the
// GPU and the amount; check raises it too; ps's table says it.
func TestPsAndCheckOrphanedMemory(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	pid := startSleeper(t)
	sim := fleetSim(t, pid)

	out, stderr, code := runCLI(t, "--gpu-sim", sim, "ps", "--json")
	if code != exitOK {
		t.Fatalf("ps --json: exit %d: %s", code, stderr)
	}
	var ps struct {
		Processes []map[string]json.RawMessage `json:"processes"`
		Findings  []struct{ Code, Severity, Message string }
	}
	if err := json.Unmarshal([]byte(out), &ps); err != nil {
		t.Fatalf("ps --json: %v\n%s", err, out)
	}
	found := false
	for _, p := range ps.Processes {
		c, ok := p["container"]
		if !ok {
			t.Errorf("a process without a container field: %v", p)
		}
		if string(p["pid"]) == strconv.Itoa(pid) {
			found = true
			if string(c) != "null" {
				t.Errorf("the sleeper runs on the host, its container is %s", c)
			}
		}
	}
	if !found {
		t.Errorf("ps --json lacks PID %d:\n%s", pid, out)
	}
	if !strings.Contains(out, `"pid": 4194305,`) || !strings.Contains(out, `"name": "(not running)"`) {
		t.Errorf("ps --json does not say PID %d is not running:\n%s", noSuchPID, out)
	}
	orphaned := func(msg string) bool {
		return strings.Contains(msg, "GPU 0 (NVIDIA A100-SXM4-40GB): 8.0 GiB") && strings.Contains(msg, strconv.Itoa(noSuchPID))
	}
	if len(ps.Findings) != 1 || ps.Findings[0].Code != "GPU_MEMORY_ORPHANED" || ps.Findings[0].Severity != "warning" || !orphaned(ps.Findings[0].Message) {
		t.Errorf("ps --json findings = %+v", ps.Findings)
	}

	out, _, _ = runCLI(t, "--gpu-sim", sim, "ps")
	if !strings.Contains(out, "GPU_MEMORY_ORPHANED") || strings.Contains(out, "CONTAINER") {
		t.Errorf("ps: want the finding and no CONTAINER column (every process is on the host):\n%s", out)
	}

	env := filepath.Join(t.TempDir(), "proj", ".venv")
	if err := pyenvtest.Write(env, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = runCLI(t, "--gpu-sim", sim, "check", "--json", env)
	if code != exitOK {
		t.Fatalf("check --json: exit %d (a warning exits 0): %s", code, stderr)
	}
	var check struct {
		Findings []struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(out), &check); err != nil {
		t.Fatal(err)
	}
	if len(check.Findings) != 1 || check.Findings[0].Code != "GPU_MEMORY_ORPHANED" || !orphaned(check.Findings[0].Message) {
		t.Errorf("check --json findings = %+v", check.Findings)
	}
}

// TestPsWSL: under (simulated) WSL2, ps says "(WSL)" and why memory is
// not per process, and ps --json says wsl.
func TestPsWSL(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	sim := simFile(t, `{"driver": "566.36", "cuda_driver": "12.7", "wsl": true,
 "devices": [{"name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9", "memory_total_bytes": 25757220864, "processes": []}]}`)
	out, _, code := runCLI(t, "--gpu-sim", sim, "ps")
	if code != exitOK || !strings.Contains(out, "[simulated] (WSL)") || !strings.Contains(out, "(WSL) under WSL2 the Windows driver (WDDM) owns the GPU: NVML lists no processes") {
		t.Errorf("ps (exit %d):\n%s", code, out)
	}
	out, _, _ = runCLI(t, "--gpu-sim", sim, "ps", "--json")
	if !strings.Contains(out, `"wsl": true`) {
		t.Errorf("ps --json lacks wsl:\n%s", out)
	}
}
