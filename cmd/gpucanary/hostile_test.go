package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// anyControl is what no text output may hold raw (it is not a terminal
// here, so not even colours).
var anyControl = regexp.MustCompile(`[\x00-\x09\x0b-\x1f\x7f\x{80}-\x{9f}\x{202a}-\x{202e}\x{2066}-\x{2069}]`)

// TestHostileNamesReachNoTerminal (issue 15, point 4): an environment
// whose path holds ESC sequences and a right-to-left override, and a real
// process whose argv[0] and arguments are terminal escapes, are shown by
// check, ps, fix, an error message and the report's env_info.md as
// visible escapes, never raw.
func TestHostileNamesReachNoTerminal(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	venv := filepath.Join(t.TempDir(), "evil\x1b]0;owned\x07\x1b[2J\u202e", ".venv")
	if err := pyenvtest.Write(venv, incidentsSpec("uv-cpu-overwrite")); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(venv, "lib", "python3.12", "site-packages", "torch", "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"libtorch_cpu.so", "libtorch_cuda.so"} {
		if err := os.WriteFile(filepath.Join(lib, name), []byte("\x7fELF not really"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatal(err)
	}
	// The script maps every file it is given: one is named "ESC [2J".
	clear := filepath.Join(t.TempDir(), "\x1b[2J")
	if err := os.WriteFile(clear, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	job := exec.Command(strings.TrimSpace(string(exe)), "-c", jobScript, filepath.Join(lib, "libtorch_cpu.so"), clear)
	job.Args[0] = "\x1b]0;owned\x07python"
	job.Env = append(os.Environ(), "VIRTUAL_ENV="+venv)
	job.Stderr = os.Stderr
	out, err := job.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { job.Process.Kill(); job.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("job said %q", line)
	}
	sim := simFile(t, fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960, "processes": [{"pid": %d, "used_memory_bytes": 1073741824}]}]}`, job.Process.Pid))

	check, _, code := runCLI(t, "--gpu-sim", sim, "check", venv)
	if code != exitFound {
		t.Errorf("check: exit %d\n%s", code, check)
	}
	ps, stderr, code := runCLI(t, "--gpu-sim", sim, "ps")
	if code != exitOK {
		t.Fatalf("ps: exit %d: %s", code, stderr)
	}
	plan, planErr, _ := runCLI(t, "--gpu-sim", sim, "fix", "--dry-run", venv)
	missing, _, _ := runCLI(t, "check", venv+"\x1b[2J-missing") // a finding of its own (ENV_UNREADABLE)
	report := filepath.Join(t.TempDir(), "report")
	if _, stderr, code := runCLI(t, "--gpu-sim", sim, "report", "-o", report, venv); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	info, err := os.ReadFile(filepath.Join(report, "env_info.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		out  string
		want []string
	}{
		"check":          {check, []string{`evil\x1b]0;owned\x07\x1b[2J\u202e/.venv`}},
		"ps":             {ps, []string{`\x1b]0;owned\x07python -c import mmap`}},
		"fix --dry-run":  {plan + planErr, []string{`Plan for ` + filepath.Dir(filepath.Dir(venv))}},
		"a missing path": {missing, []string{`\x1b[2J-missing`}},
		"env_info.md":    {string(info), []string{`### ` + filepath.Dir(filepath.Dir(venv)), `evil\x1b]0;owned\x07\x1b[2J\u202e/.venv`, `\x1b]0;owned\x07python`, `\x1b[2J`}},
	} {
		if loc := anyControl.FindStringIndex(tc.out); loc != nil {
			t.Errorf("%s writes %q raw:\n%q", name, tc.out[loc[0]:loc[1]], tc.out)
		}
		for _, w := range tc.want {
			if !strings.Contains(tc.out, w) {
				t.Errorf("%s does not show %q:\n%s", name, w, tc.out)
			}
		}
	}
	// The commands shown are text and paste back: bash reads the
	// environment's exact path out of check's fix and fix's plan.
	for name, tc := range map[string]struct{ out, prefix string }{
		"check's fix":             {check, "fix: "},
		"fix --dry-run's command": {plan, "command: "},
	} {
		_, line, ok := strings.Cut(tc.out, tc.prefix)
		line, _, _ = strings.Cut(line, "\n")
		inVenv := func(w string) bool { return w == venv || strings.HasPrefix(w, venv+"/") }
		if !ok || !slices.ContainsFunc(bashWords(t, line), inVenv) {
			t.Errorf("%s %q does not paste back to the path %q or one in it", name, line, venv)
		}
	}
}

// bashWords are the words real bash reads from the command line line,
// which it does not run.
func bashWords(t *testing.T, line string) []string {
	t.Helper()
	out, err := exec.Command("bash", "-c", "set -- "+line+`; printf '%s\0' "$@"`).Output()
	if err != nil {
		t.Fatalf("bash reading %q: %v", line, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// TestPathNotUTF8NamesItsFolderInJSON (issue 15, point 4): a real
// environment in a folder whose name is not UTF-8 (Linux allows any byte)
// is written by check --json with path_bytes, which names the folder
// exactly; the text output shows the byte as an escape.
func TestPathNotUTF8NamesItsFolderInJSON(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a file name that is not UTF-8 needs a Linux file system")
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	venv := filepath.Join(t.TempDir(), "caf\xe9", ".venv")
	if err := pyenvtest.Write(venv, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	sim := simFile(t, simA100)
	out, stderr, code := runCLI(t, "--gpu-sim", sim, "check", "--json", venv)
	if code != exitOK {
		t.Fatalf("check --json: exit %d: %s\n%s", code, stderr, out)
	}
	var res struct {
		Envs []struct {
			Path      string `json:"path"`
			PathBytes []byte `json:"path_bytes"`
		} `json:"envs"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Envs) != 1 {
		t.Fatalf("check --json: %v\n%s", err, out)
	}
	got := string(res.Envs[0].PathBytes)
	if got != venv {
		t.Fatalf("path_bytes = %q, want %q", got, venv)
	}
	if fi, err := os.Stat(filepath.Join(got, "pyvenv.cfg")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("path_bytes does not name the environment's folder: %v", err)
	}
	if _, err := os.Stat(res.Envs[0].Path); err == nil {
		t.Errorf("the lossy path %q unexpectedly names a folder", res.Envs[0].Path)
	}
	text, _, _ := runCLI(t, "--gpu-sim", sim, "check", venv)
	if !strings.Contains(text, `caf\xe9/.venv`) {
		t.Errorf("the text output does not show the byte:\n%s", text)
	}

	// watch --json carries env_bytes on its events the same way.
	events := watchJSONUntil(t, sim, venv, "ENV_ADDED")
	var ev struct {
		EnvBytes []byte `json:"env_bytes"`
	}
	if err := json.Unmarshal([]byte(events), &ev); err != nil || string(ev.EnvBytes) != venv {
		t.Errorf("watch --json: %v %s", err, events)
	}
}

// TestFindingEnvNotUTF8InJSON: a finding about an environment in a
// folder whose name is not UTF-8 carries env_bytes beside its env in
// check --json (envs[].findings[]), as path_bytes is beside the
// environment's path.
func TestFindingEnvNotUTF8InJSON(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a file name that is not UTF-8 needs a Linux file system")
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	venv := filepath.Join(t.TempDir(), "caf\xe9", ".venv")
	if err := pyenvtest.Write(venv, incidentsSpec("uv-cpu-overwrite")); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, "--gpu-sim", simFile(t, simA100), "check", "--json", venv)
	if code != exitFound {
		t.Fatalf("check --json: exit %d: %s\n%s", code, stderr, out)
	}
	var res struct {
		Envs []struct {
			Findings []struct {
				Code     string `json:"code"`
				Env      string `json:"env"`
				EnvBytes []byte `json:"env_bytes"`
			} `json:"findings"`
		} `json:"envs"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Envs) != 1 || len(res.Envs[0].Findings) == 0 {
		t.Fatalf("check --json: %v\n%s", err, out)
	}
	for _, f := range res.Envs[0].Findings {
		if string(f.EnvBytes) != venv {
			t.Errorf("%s: env_bytes = %q, want %q (env %q)", f.Code, f.EnvBytes, venv, f.Env)
		}
	}
}

// watchJSONUntil runs `watch --json path` until it prints an event of
// kind, and returns that line.
func watchJSONUntil(t *testing.T, sim, path, kind string) string {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx, []string{"--gpu-sim", sim, "watch", "--json", path}, stdio{in: strings.NewReader(""), out: pw, err: io.Discard})
		pw.Close()
	}()
	defer func() { cancel(); io.Copy(io.Discard, pr); <-done }()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		var ev struct{ Kind string }
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Kind == kind {
			return sc.Text()
		}
	}
	t.Fatalf("watch ended before %s", kind)
	return ""
}
