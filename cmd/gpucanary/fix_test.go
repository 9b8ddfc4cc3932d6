package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/fixjournal"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// pytorchIndex serves torch 2.5.1 and torchvision 0.20.1 for cpu, cu118,
// cu121 and cu124 as BASE/TAG/, like download.pytorch.org.
func pytorchIndex(t *testing.T) (*wheeltest.Index, string) {
	t.Helper()
	idx := wheeltest.NewIndex(t.TempDir())
	for _, tag := range []string{"cpu", "cu118", "cu121", "cu124"} {
		for _, s := range []wheeltest.Spec{wheeltest.Torch("2.5.1", tag), wheeltest.Companion("torchvision", "0.20.1", tag)} {
			if err := idx.Add(tag, s); err != nil {
				t.Fatal(err)
			}
		}
	}
	srv := httptest.NewServer(idx)
	t.Cleanup(srv.Close)
	return idx, srv.URL
}

// cpuVenv makes a venv at dir holding CPU builds of torch and torchvision.
func cpuVenv(t *testing.T, py, base, dir string) {
	t.Helper()
	wheeltest.NewVenv(t, py, dir)
	wheeltest.Pip(t, py, dir, "install", "--index-url", base+"/cpu", "torch==2.5.1+cpu", "torchvision==0.20.1+cpu")
}

// fixCase is a venv with CPU builds of torch and torchvision installed by
// real pip from a local PyTorch-style index.
type fixCase struct {
	py   string
	idx  *wheeltest.Index
	base string
	venv string
}

// newFixCase sets one up; dir "" puts the venv in a temporary folder.
func newFixCase(t *testing.T, dir string) fixCase {
	t.Helper()
	fixEnvSetup(t)
	c := fixCase{py: wheeltest.Python(t), venv: dir}
	c.idx, c.base = pytorchIndex(t)
	if c.venv == "" {
		c.venv = filepath.Join(t.TempDir(), ".venv")
	}
	cpuVenv(t, c.py, c.base, c.venv)
	return c
}

func fixEnvSetup(t *testing.T) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("NO_COLOR", "1")
}

// onlyJournal is the one repair journal in the state folder
// (XDG_STATE_HOME), read.
func onlyJournal(t *testing.T) fixjournal.JournalRecord {
	t.Helper()
	journals, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_STATE_HOME"), "gpucanary", "journal", "*.jsonl"))
	if len(journals) != 1 {
		t.Fatalf("journals: %v", journals)
	}
	j, err := fixjournal.ReadJournal(journals[0])
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func installed(t *testing.T, venv string) (torch, vision string) {
	t.Helper()
	env, err := pyenv.Inspect(venv)
	if err != nil {
		t.Fatal(err)
	}
	if p := env.Packages["torch"]; p != nil {
		torch = p.Version
	}
	if p := env.Packages["torchvision"]; p != nil {
		vision = p.Version
	}
	return torch, vision
}

func TestFixReinstallsTheChosenCUDABuild(t *testing.T) {
	// A path with spaces and quotes: argv, never a shell string.
	c := newFixCase(t, filepath.Join(t.TempDir(), `my "quoted" env's dir`, ".venv"))
	base, venv := c.base, c.venv

	out, stderr, code := runCLI(t, "--gpu-sim", simFile(t, simA100), "fix", "--yes", "--index-base", base, venv)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	torch, vision := installed(t, venv)
	if torch != "2.5.1+cu124" || vision != "0.20.1+cu124" {
		t.Fatalf("after fix: torch %s, torchvision %s; want the cu124 builds kb picks for an A100 on driver 550\n%s", torch, vision, out)
	}
	if env, err := pyenv.Inspect(venv); err != nil || env.Packages["nvidia-cublas-cu12"] == nil {
		t.Errorf("after fix: the CUDA torch's runtime wheels are not installed (%v)", err)
	}
	for _, want := range []string{"variant:   cu124", "Fixed: torch 2.5.1+cu124", "Journal: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	j := onlyJournal(t)
	if j.Before["torch"] != "2.5.1+cpu" || j.Result == nil || !j.Result.Fixed || !strings.Contains(j.Rollback, "torch==2.5.1+cpu") || len(j.Output) == 0 || j.Env != venv {
		t.Errorf("journal: %+v", j)
	}
}

// TestCheckAndFixAMissingRuntime is the defect's own scenario: a CUDA
// torch installed by real pip with --no-deps has none of its NVIDIA
// runtime wheels, so `import torch` fails. check says so (exit 1,
// TORCH_INSTALL_BROKEN naming the library), fix installs them, and check
// is then clean (exit 0).
func TestCheckAndFixAMissingRuntime(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("torch's nvidia-* requirements apply on x86_64 only")
	}
	fixEnvSetup(t)
	py := wheeltest.Python(t)
	_, base := pytorchIndex(t)
	venv := filepath.Join(t.TempDir(), ".venv")
	wheeltest.NewVenv(t, py, venv)
	wheeltest.Pip(t, py, venv, "install", "--no-deps", "--index-url", base+"/cu124", "torch==2.5.1+cu124")
	sim := simFile(t, simA100)

	out, _, code := runCLI(t, "--gpu-sim", sim, "check", venv)
	if code != exitFound || !strings.Contains(out, "TORCH_INSTALL_BROKEN") || !strings.Contains(out, "libcublas.so.12: cannot open shared object file") {
		t.Fatalf("check before the fix: exit %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "--gpu-sim", sim, "fix", "--yes", "--index-base", base, venv)
	if code != exitOK || !strings.Contains(out, "Fixed: torch 2.5.1+cu124") {
		t.Fatalf("fix: exit %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "--gpu-sim", sim, "check", venv)
	if code != exitOK || strings.Contains(out, "TORCH_INSTALL_BROKEN") {
		t.Errorf("check after the fix: exit %d\n%s", code, out)
	}
}

func TestFixDryRunChangesNothing(t *testing.T) {
	c := newFixCase(t, "")
	idx, base, venv := c.idx, c.base, c.venv
	before := idx.Requests()

	out, _, code := runCLI(t, "--gpu-sim", simFile(t, simA100), "fix", "--dry-run", "--index-base", base, venv)
	if code != 0 || !strings.Contains(out, "Dry run: nothing was changed") || !strings.Contains(out, "torch==2.5.1+cu124") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if torch, _ := installed(t, venv); torch != "2.5.1+cpu" || idx.Requests() != before {
		t.Errorf("dry run changed something: torch %s, %d downloads", torch, idx.Requests()-before)
	}
}

func TestFixWithoutYesAsks(t *testing.T) {
	c := newFixCase(t, "")
	base, venv := c.base, c.venv
	// stdin is empty: the answer is no.
	out, _, code := runCLI(t, "--gpu-sim", simFile(t, simA100), "fix", "--index-base", base, venv)
	if code != 1 || !strings.Contains(out, "Reinstall now? [y/N]") || !strings.Contains(out, "Nothing was changed") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if torch, _ := installed(t, venv); torch != "2.5.1+cpu" {
		t.Errorf("torch changed without a yes: %s", torch)
	}
}

func TestFixKilledHalfWayThenRerun(t *testing.T) {
	c := newFixCase(t, "")
	idx, base, venv := c.idx, c.base, c.venv

	idx.SetDelay(5 * time.Second)
	out, _, code := runCLI(t, "--gpu-sim", simFile(t, simA100), "fix", "--yes", "--timeout", "1500ms", "--index-base", base, venv)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{"Not fixed: the installer ran longer than 1.5s and was stopped", "Installed now: torch 2.5.1+cpu", "Journal: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "To put back") {
		t.Errorf("a rollback is offered although pip was stopped before it changed anything:\n%s", out)
	}
	// The installer's whole process group is gone.
	if out, err := exec.Command("pgrep", "-f", "pip --python "+venv).Output(); err == nil && len(out) > 0 {
		t.Errorf("installer processes survive: %s", out)
	}
	idx.SetDelay(0)
	out, _, code = runCLI(t, "--gpu-sim", simFile(t, simA100), "fix", "--yes", "--index-base", base, venv)
	if code != 0 {
		t.Fatalf("rerun: exit %d:\n%s", code, out)
	}
	if torch, _ := installed(t, venv); torch != "2.5.1+cu124" {
		t.Errorf("after the rerun: %s", torch)
	}
}

func TestFixRefusedWhileTheEnvironmentRuns(t *testing.T) {
	c := newFixCase(t, "")
	base, venv := c.base, c.venv
	job := exec.Command("sleep", "60")
	job.Env = append(os.Environ(), "VIRTUAL_ENV="+venv)
	if err := job.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { job.Process.Kill(); job.Wait() }()

	out, _, code := runCLI(t, "--gpu-sim", simFile(t, simA100), "fix", "--yes", "--index-base", base, venv)
	if code != 1 || !strings.Contains(out, "stop them first") || !strings.Contains(out, "sleep 60") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if torch, _ := installed(t, venv); torch != "2.5.1+cpu" {
		t.Errorf("torch changed while the environment ran: %s", torch)
	}
}

// TestFixUVRoute runs the uv plan against a stand-in uv that records its
// argv and installs with pip, so the whole flow runs without uv.
func TestFixUVRoute(t *testing.T) {
	c := newFixCase(t, "")
	py, base, venv := c.py, c.base, c.venv
	cfg, _ := os.ReadFile(filepath.Join(venv, "pyvenv.cfg"))
	os.WriteFile(filepath.Join(venv, "pyvenv.cfg"), append(cfg, []byte("uv = 0.5.11\n")...), 0o644)

	bin := t.TempDir()
	argvLog := filepath.Join(bin, "argv.log")
	script := `#!/bin/sh
# A stand-in for uv: records its argv, then does "uv pip install" with pip.
for a in "$@"; do printf '%s\n' "$a"; done > "` + argvLog + `"
[ "$1 $2" = "pip install" ] || exit 2
shift 2
[ "$1" = "--python" ] || exit 2
env=$2; shift 2
for a in "$@"; do [ "$a" = "--reinstall" ] && a=--force-reinstall; set -- "$@" "$a"; shift; done
exec ` + py + ` -m pip --python "$env/bin/python" --disable-pip-version-check install "$@"
`
	if err := os.WriteFile(filepath.Join(bin, "uv"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	out, _, code := runCLI(t, "--gpu-sim", simFile(t, simA100), "fix", "--yes", "--index-base", base, venv)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	argv, _ := os.ReadFile(argvLog)
	got := strings.ReplaceAll(strings.ReplaceAll(string(argv), venv, "$ENV"), base, "$BASE")
	golden(t, "fix-uv.argv.golden", got)
	if torch, vision := installed(t, venv); torch != "2.5.1+cu124" || vision != "0.20.1+cu124" {
		t.Errorf("after the uv route: %s %s", torch, vision)
	}
}

func TestFixPlanArgvGolden(t *testing.T) {
	fixEnvSetup(t)
	root := t.TempDir()
	venv := filepath.Join(root, "proj", ".venv")
	spec := incidentsSpec("uv-cpu-overwrite")
	if err := writeSpec(venv, spec); err != nil {
		t.Fatal(err)
	}
	// A PATH with python3 and no uv, the same on every machine.
	bin := t.TempDir()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	if err := os.Symlink(py, filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	out, _, code := runCLI(t, "--gpu-sim", simFile(t, simA100), "fix", "--dry-run", venv)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	golden(t, "fix-plan.txt.golden", strings.ReplaceAll(strings.ReplaceAll(out, root, "$ROOT"), bin, "$BIN"))

	blackwell := `{"driver": "570.86.10", "cuda_driver": "12.8", "devices": [{"name": "NVIDIA GeForce RTX 5090", "compute_capability": "12.0", "memory_total_bytes": 34359738368}]}`
	out, _, code = runCLI(t, "--gpu-sim", simFile(t, blackwell), "fix", "--dry-run", venv)
	if code != 0 || !strings.Contains(out, "torch 2.7.1+cu128") || !strings.Contains(out, "NOTE:") ||
		!strings.Contains(out, "the oldest release after 2.5.1 with a build for every GPU here is torch 2.7.1") || !strings.Contains(out, "upgrade:   torch changes release, 2.5.1 → 2.7.1") {
		t.Errorf("Blackwell plan, exit %d:\n%s", code, out)
	}
	// Issue 16 point 3: a variant that cannot exist is refused (exit 2,
	// with the variants there are); one that cannot run here is warned of.
	_, errOut, code := runCLI(t, "--gpu-sim", simFile(t, blackwell), "fix", "--dry-run", "--variant", "cu128", venv)
	if code != 2 || !strings.Contains(errOut, "pytorch.org has no cu128 build of torch 2.5.1: its CUDA variants are cu118, cu121, cu124") {
		t.Errorf("--variant cu128 for 2.5.1, exit %d:\n%s", code, errOut)
	}
	out, _, code = runCLI(t, "--gpu-sim", simFile(t, blackwell), "fix", "--dry-run", "--variant", "cu124", venv)
	if code != 0 || !strings.Contains(out, "WARNING:   cu124 will not run on NVIDIA GeForce RTX 5090 (sm_120)") {
		t.Errorf("--variant cu124 on a Blackwell, exit %d:\n%s", code, out)
	}
	// Without a GPU a CPU build is fine: nothing to fix, unless a
	// variant is asked for, which then must be given.
	out, _, code = runCLI(t, "--gpu-sim", simFile(t, `{"devices": []}`), "fix", "--dry-run", venv)
	if code != 0 || !strings.Contains(out, "Nothing to fix") {
		t.Errorf("no driver, exit %d:\n%s", code, out)
	}
	out, _, code = runCLI(t, "--gpu-sim", simFile(t, `{"devices": []}`), "fix", "--dry-run", "--force", venv)
	if code != 1 || !strings.Contains(out, "pass --variant") {
		t.Errorf("no driver, --force, exit %d:\n%s", code, out)
	}
	out, _, code = runCLI(t, "--gpu-sim", simFile(t, `{"devices": []}`), "fix", "--dry-run", "--variant", "cu121", venv)
	if code != 0 || !strings.Contains(out, "torch==2.5.1+cu121") {
		t.Errorf("--variant, exit %d:\n%s", code, out)
	}
}

func TestPinIndexCommand(t *testing.T) {
	fixEnvSetup(t)
	root := t.TempDir()
	venv := filepath.Join(root, ".venv")
	if err := writeSpec(venv, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	pyproject := filepath.Join(root, "pyproject.toml")
	os.WriteFile(pyproject, []byte("[project]\nname = \"p\"\nversion = \"0.1.0\"\ndependencies = [\"torch\", \"torchvision\"]\n"), 0o644)
	out, stderr, code := runCLI(t, "--gpu-sim", simFile(t, simA100), "fix", "--pin-index", venv)
	if code != 0 || !strings.Contains(out, "uv lock") {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	b, _ := os.ReadFile(pyproject)
	if !strings.Contains(string(b), `torch = [{ index = "pytorch-cu124"`) || !strings.Contains(string(b), `url = "https://download.pytorch.org/whl/cu124"`) {
		t.Errorf("pyproject.toml:\n%s", b)
	}
	// A lock taking a CPU torch: check warns before it happens. The pin is
	// there already, so what is left is `uv lock`, not pinning again.
	os.WriteFile(filepath.Join(root, "uv.lock"), []byte("version = 1\n\n[[package]]\nname = \"torch\"\nversion = \"2.5.1+cpu\"\nsource = { registry = \"https://download.pytorch.org/whl/cpu\" }\n"), 0o644)
	out, _, _ = runCLI(t, "--gpu-sim", simFile(t, simA100), "check", venv)
	if !strings.Contains(out, "UV_WILL_REPLACE_TORCH") || !strings.Contains(out, "run `uv lock` in "+root) || strings.Contains(out, "fix --pin-index") {
		t.Errorf("check did not warn:\n%s", out)
	}
	// Before the pin, the fix is the pin.
	os.WriteFile(pyproject, []byte("[project]\nname = \"p\"\nversion = \"0.1.0\"\ndependencies = [\"torch\", \"torchvision\"]\n"), 0o644)
	out, _, _ = runCLI(t, "--gpu-sim", simFile(t, simA100), "check", venv)
	if !strings.Contains(out, "UV_WILL_REPLACE_TORCH") || !strings.Contains(out, "fix: gpucanary fix --pin-index "+venv) {
		t.Errorf("check did not warn:\n%s", out)
	}
}

// TestFixHealthySaysNothingToFix: `fix` on an environment that raises
// none of the findings a reinstall fixes says so and exits 0, with no
// plan run and nothing downloaded; --force or an explicit --variant still
// reinstall. Before, it planned a cu121 → cu124 reinstall of a healthy
// cu121 torch.
func TestFixHealthySaysNothingToFix(t *testing.T) {
	fixEnvSetup(t)
	py := wheeltest.Python(t)
	idx, base := pytorchIndex(t)
	venv := filepath.Join(t.TempDir(), ".venv")
	wheeltest.NewVenv(t, py, venv)
	wheeltest.Pip(t, py, venv, "install", "--index-url", base+"/cu121", "torch==2.5.1+cu121", "torchvision==0.20.1+cu121")
	sim := simFile(t, simA100)
	before := idx.Requests()

	out, stderr, code := runCLI(t, "--gpu-sim", sim, "fix", "--yes", "--index-base", base, venv)
	if code != exitOK || !strings.Contains(out, "Nothing to fix in "+venv) || !strings.Contains(out, "torch 2.5.1+cu121") || strings.Contains(out, "Plan for") {
		t.Fatalf("exit %d:\n%s\n%s", code, out, stderr)
	}
	if torch, _ := installed(t, venv); torch != "2.5.1+cu121" || idx.Requests() != before {
		t.Errorf("a healthy environment was changed: torch %s, %d downloads", torch, idx.Requests()-before)
	}
	if j, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_STATE_HOME"), "gpucanary", "journal", "*")); len(j) != 0 {
		t.Errorf("a repair was recorded: %v", j)
	}
	for _, args := range [][]string{{"--force"}, {"--variant", "cu124"}} {
		out, _, code := runCLI(t, append(append([]string{"--gpu-sim", sim, "fix", "--dry-run", "--index-base", base}, args...), venv)...)
		if code != exitOK || !strings.Contains(out, "Plan for") || !strings.Contains(out, "Dry run") {
			t.Errorf("%v: exit %d:\n%s", args, code, out)
		}
	}
}

// TestFixFailureQuotesTheInstaller: real pip finds no such wheel (the
// index has CPU builds only): "Not fixed" quotes pip's own error lines,
// and offers no rollback, since nothing changed. Before, it said only
// "the installer failed with exit status 1" and offered a rollback.
func TestFixFailureQuotesTheInstaller(t *testing.T) {
	fixEnvSetup(t)
	py := wheeltest.Python(t)
	idx := wheeltest.NewIndex(t.TempDir())
	for _, s := range []wheeltest.Spec{wheeltest.Torch("2.5.1", "cpu"), wheeltest.Companion("torchvision", "0.20.1", "cpu")} {
		if err := idx.Add("cpu", s); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(idx)
	t.Cleanup(srv.Close)
	venv := filepath.Join(t.TempDir(), ".venv")
	cpuVenv(t, py, srv.URL, venv)

	out, _, code := runCLI(t, "--gpu-sim", simFile(t, simA100), "fix", "--yes", "--index-base", srv.URL, venv)
	if code != exitFound {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	after := out[strings.Index(out, "Not fixed:"):]
	for _, want := range []string{"Not fixed: the installer failed with exit status 1", "The installer said:", "No matching distribution found for torch==2.5.1+cu124", "Installed now: torch 2.5.1+cpu"} {
		if !strings.Contains(after, want) {
			t.Errorf("output after the run lacks %q:\n%s", want, after)
		}
	}
	if strings.Contains(out, "To put back") {
		t.Errorf("a rollback is offered although nothing changed:\n%s", out)
	}
}

// TestWatchRecordsARepairFromTheCommandLine: `gpucanary fix` in one
// terminal and `watch --json` in another: the engine publishes the
// repair from its journal (REPAIR_STARTED, REPAIR_SUCCEEDED), with no
// file written by both.
func TestWatchRecordsARepairFromTheCommandLine(t *testing.T) {
	c := newFixCase(t, "")
	sim := simFile(t, simA100)
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--gpu-sim", sim, "watch", "--json", c.venv}, stdio{in: strings.NewReader(""), out: pw, err: io.Discard})
		pw.Close()
	}()
	kinds := make(chan map[string]any, 64)
	go func() {
		defer close(kinds)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				kinds <- ev
			}
		}
	}()
	wait := func(kind string) map[string]any {
		t.Helper()
		timeout := time.After(60 * time.Second)
		for {
			select {
			case ev, ok := <-kinds:
				if !ok {
					t.Fatalf("watch ended before %s", kind)
				}
				if ev["kind"] == kind {
					return ev
				}
			case <-timeout:
				t.Fatalf("no %s line", kind)
			}
		}
	}
	wait("ENV_ADDED")
	out, _, fixCode := runCLI(t, "--gpu-sim", sim, "fix", "--yes", "--index-base", c.base, c.venv)
	if fixCode != 0 {
		t.Fatalf("fix: exit %d\n%s", fixCode, out)
	}
	wait("REPAIR_STARTED")
	ev := wait("REPAIR_SUCCEEDED")
	r, _ := ev["repair"].(map[string]any)
	if ev["env"] != c.venv || r == nil || !strings.Contains(r["journal"].(string), "journal") || !strings.Contains(ev["message"].(string), "2.5.1+cpu → 2.5.1+cu124") {
		t.Errorf("REPAIR_SUCCEEDED = %v", ev)
	}
	cancel()
	<-code
}

// TestIndexPasswordIsNeverShown: a mirror URL with a password (given or
// configured) is used by the installer, but the plan, the command, the
// rollback, the finding's fix and the journal show it redacted.
func TestIndexPasswordIsNeverShown(t *testing.T) {
	c := newFixCase(t, "")
	const secret = "s3cret-pw"
	base := strings.Replace(c.base, "http://", "http://ada:"+secret+"@", 1)
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("index_base = \""+base+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check, _, _ := runCLI(t, "--config", cfg, "--gpu-sim", simFile(t, simA100), "check", c.venv)
	out, stderr, code := runCLI(t, "--config", cfg, "--gpu-sim", simFile(t, simA100), "fix", "--yes", c.venv)
	if code != 0 {
		t.Fatalf("the installer did not get the real URL: exit %d\n%s\n%s", code, out, stderr)
	}
	journals, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_STATE_HOME"), "gpucanary", "journal", "*.jsonl"))
	if len(journals) != 1 {
		t.Fatalf("journals: %v", journals)
	}
	journal, err := os.ReadFile(journals[0])
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"check": check, "fix": out + stderr, "journal": string(journal)} {
		if strings.Contains(text, secret) {
			t.Errorf("%s shows the index password:\n%s", name, text)
		}
	}
	if !strings.Contains(check, "ada:***@") || !strings.Contains(out, "ada:***@") || !strings.Contains(out, "Fixed: torch 2.5.1+cu124") {
		t.Errorf("the redacted URL is not shown:\ncheck:\n%s\nfix:\n%s", check, out)
	}
}

// TestCheckUVLockThatCannotRun: audit issue 1 end to end. On an RTX 5090
// a uv project whose venv has torch 2.7.1+cu128 and whose uv.lock takes
// torch 2.7.1 from PyPI (cu126 on Linux, no sm_120) makes check exit 1
// with UV_WILL_REPLACE_TORCH and the index pin as the fix; the pin made,
// the lock still has to follow, which check says.
func TestCheckUVLockThatCannotRun(t *testing.T) {
	fixEnvSetup(t)
	root := t.TempDir()
	venv := filepath.Join(root, ".venv")
	if err := writeSpec(venv, pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.7.1+cu128", CUDA: "12.8", Installer: "uv"}}); err != nil {
		t.Fatal(err)
	}
	pyproject := filepath.Join(root, "pyproject.toml")
	files := map[string]string{
		pyproject:                      "[project]\nname = \"train\"\nversion = \"0.1.0\"\ndependencies = [\"torch>=2.7\"]\n",
		filepath.Join(root, "uv.lock"): "version = 1\n\n[[package]]\nname = \"torch\"\nversion = \"2.7.1\"\nsource = { registry = \"https://pypi.org/simple\" }\n",
	}
	for path, data := range files {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	blackwell := simFile(t, `{"driver": "570.86.10", "cuda_driver": "12.8", "devices": [{"name": "NVIDIA GeForce RTX 5090", "compute_capability": "12.0"}]}`)
	out, _, code := runCLI(t, "--gpu-sim", blackwell, "check", venv)
	if code != exitFound || !strings.Contains(out, "✗ UV_WILL_REPLACE_TORCH") || !strings.Contains(out, "cu126 has no code for NVIDIA GeForce RTX 5090 (sm_120)") ||
		!strings.Contains(out, "fix: gpucanary fix --pin-index "+venv) {
		t.Fatalf("check exit %d:\n%s", code, out)
	}
	if out, stderr, code := runCLI(t, "--gpu-sim", blackwell, "fix", "--pin-index", venv); code != 0 || !strings.Contains(out, "whl/cu128") {
		t.Fatalf("fix --pin-index exit %d:\n%s%s", code, out, stderr)
	}
	out, _, code = runCLI(t, "--gpu-sim", blackwell, "check", venv)
	if code != exitFound || !strings.Contains(out, "run `uv lock` in "+root) || strings.Contains(out, "fix: ") {
		t.Errorf("check after the pin, exit %d:\n%s", code, out)
	}
}

// TestFixPlanNamesAnEditableTorch: the plan `fix` prints over a torch
// installed with `pip install -e` says, before anything runs, that the
// checkout stops being what import loads and is not deleted.
func TestFixPlanNamesAnEditableTorch(t *testing.T) {
	fixEnvSetup(t)
	venv := filepath.Join(t.TempDir(), ".venv")
	if err := writeSpec(venv, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip"}}); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "pytorch")
	dist := filepath.Join(venv, "lib", "python3.11", "site-packages", "torch-2.5.1+cpu.dist-info", "direct_url.json")
	if err := os.WriteFile(dist, []byte(`{"dir_info": {"editable": true}, "url": "file://`+filepath.ToSlash(src)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := runCLI(t, "--gpu-sim", simFile(t, simA100), "fix", "--dry-run", venv)
	if code != exitOK || !strings.Contains(out, "changes:   torch is an editable install of "+src+" (pip install -e): the repair uninstalls it") ||
		!strings.Contains(out, "The checkout itself is not deleted") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
