package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// kbProgram runs the program in a child, with its own settings folder:
// the knowledge overlays are read once per process, as a user's command
// reads them.
func kbProgram(t *testing.T, config string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := programCommand(t, args...)
	cmd.Env = append(cmd.Env, "XDG_CONFIG_HOME="+config, "XDG_STATE_HOME="+filepath.Join(config, "state"), "NO_COLOR=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// kbDump is the part of `kb --json` these tests read.
type kbDump struct {
	AsOf   string `json:"as_of"`
	Newest struct {
		Minor string `json:"minor"`
	} `json:"newest"`
	Overlays []struct {
		Path  string `json:"path"`
		Rows  int    `json:"rows"`
		Error string `json:"error"`
	} `json:"overlays"`
	Releases []map[string]any `json:"releases"`
	Arches   []map[string]any `json:"arches"`
}

func readKB(t *testing.T, config string) (kbDump, string) {
	t.Helper()
	out, stderr, code := kbProgram(t, config, "kb", "--json")
	if code != 0 {
		t.Fatalf("kb --json: exit %d\n%s", code, stderr)
	}
	var d kbDump
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("kb --json: %v\n%s", err, out)
	}
	return d, stderr
}

// gtx1080Ti is a Pascal card with a driver for CUDA 13.2.
const gtx1080Ti = `{"driver": "595.45.04", "cuda_driver": "13.2",
 "devices": [{"name": "NVIDIA GeForce GTX 1080 Ti", "uuid": "GPU-0001", "compute_capability": "6.1",
              "memory_total_bytes": 11811160064, "processes": []}]}`

// TestKBKnowsToday is issue 29: `kb --json` knows 2.15 and the day its
// facts were checked; an overlay naming a torch 2.99 with 2.15's rows
// makes 2.99 known without a rebuild; a broken overlay is named and
// harmless.
func TestKBKnowsToday(t *testing.T) {
	config := t.TempDir()
	d, _ := readKB(t, config)
	if d.AsOf != "2026-11-26" || d.Newest.Minor != "2.15" || len(d.Overlays) != 0 {
		t.Fatalf("kb --json: as of %q, newest %q, overlays %v", d.AsOf, d.Newest.Minor, d.Overlays)
	}
	text, _, code := kbProgram(t, config, "kb")
	for _, want := range []string{"as of 2026-11-26", "Newest torch: 2.15", "cu132", "595.45.04", "N/A: the R580 branch", "none read"} {
		if code != 0 || !strings.Contains(text, want) {
			t.Errorf("kb: exit %d, output lacks %q:\n%s", code, want, text)
		}
	}

	// 2.15's rows, copied from kb --json, as 2.99.
	var o struct {
		Releases []map[string]any `json:"releases"`
		Arches   []map[string]any `json:"arches"`
	}
	for _, r := range d.Releases {
		if r["minor"] == "2.15" {
			r["minor"], r["patches"] = "2.99", []string{"2.99.0"}
			o.Releases = append(o.Releases, r)
		}
	}
	for _, a := range d.Arches {
		for _, m := range a["minors"].([]any) {
			if m == "2.15" {
				a["minors"] = []string{"2.99"}
				o.Arches = append(o.Arches, a)
				break
			}
		}
	}
	dir := filepath.Join(config, "gpucanary", "kb.d")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(o)
	good, broken := filepath.Join(dir, "50-torch-2.99.json"), filepath.Join(dir, "60-broken.json")
	if err := os.WriteFile(good, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, []byte(`{"releases": [{"minor": `), 0o644); err != nil {
		t.Fatal(err)
	}
	d, stderr := readKB(t, config)
	if d.Newest.Minor != "2.99" || len(d.Overlays) != 2 || d.Overlays[0].Path != good || d.Overlays[0].Rows == 0 ||
		d.Overlays[1].Path != broken || d.Overlays[1].Error == "" {
		t.Errorf("kb --json with overlays: newest %q, overlays %+v", d.Newest.Minor, d.Overlays)
	}
	if !strings.Contains(stderr, "warning: reading knowledge overlay "+broken) {
		t.Errorf("kb: stderr does not name the broken overlay:\n%s", stderr)
	}

	// check judges torch 2.99 by its rows: known, and no kernel for a
	// Pascal card; the broken file is named, and nothing else changes.
	env := filepath.Join(t.TempDir(), "env")
	if err := pyenvtest.Write(env, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.99.0+cu132", CUDA: "13.2", Installer: "pip"}}); err != nil {
		t.Fatal(err)
	}
	sim := filepath.Join(t.TempDir(), "gpu.json")
	if err := os.WriteFile(sim, []byte(gtx1080Ti), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := kbProgram(t, config, "--gpu-sim", sim, "check", "--json", env)
	if code != 1 || !strings.Contains(out, "GPU_ARCH_UNSUPPORTED") || strings.Contains(out, "TORCH_UNKNOWN_RELEASE") ||
		!strings.Contains(out, "torch==2.14.0+cu126") {
		t.Errorf("check of 2.99 on a GTX 1080 Ti: exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(stderr, broken) {
		t.Errorf("check: stderr does not name the broken overlay:\n%s", stderr)
	}
}

// TestKBRefresh: kb refresh against a local index teaches the releases
// and tags it lists; an index that cannot be reached is said so, and
// what was known stays.
func TestKBRefresh(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/whl/torch/" {
			http.NotFound(w, r)
			return
		}
		for _, f := range []string{
			"torch-2.16.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl",
			"torch-2.16.0+cu130-cp312-cp312-manylinux_2_28_aarch64.whl",
			"torch-2.16.0+cu130-cp312-cp312-win_amd64.whl",
			"torch-2.15.1+cu134-cp312-cp312-manylinux_2_28_x86_64.whl",
			"torch-2.49.6+cu139-cp312-cp312-manylinux_2_28_x86_64.whl", // no release pattern allows it
		} {
			href := "/whl/" + strings.TrimSuffix(strings.SplitN(f, "+", 2)[1][:5], "-") + "/" + strings.ReplaceAll(f, "+", "%2B")
			w.Write([]byte(`<a href="` + href + `#sha256=00">` + f + "</a><br/>\n"))
		}
	}))
	defer srv.Close()
	config := t.TempDir()
	out, stderr, code := kbProgram(t, config, "kb", "refresh", "--index-url", srv.URL+"/whl")
	if code != 0 || !strings.Contains(out, "torch 2.16 (2.16.0): cu130, cu132") || !strings.Contains(out, "torch 2.15: 2.15.1, cu134") ||
		!strings.Contains(out, "not learned (implausible): 2.49.6") || strings.Contains(out, "built-in facts: torch 2.49") {
		t.Fatalf("kb refresh: exit %d\n%s\n%s", code, out, stderr)
	}
	d, _ := readKB(t, config)
	if d.Newest.Minor != "2.16" || len(d.Overlays) != 1 || !strings.HasSuffix(d.Overlays[0].Path, filepath.Join("gpucanary", "kb-refresh.json")) {
		t.Errorf("after refresh: newest %q, overlays %+v", d.Newest.Minor, d.Overlays)
	}

	srv.Close()
	out, stderr, code = kbProgram(t, config, "kb", "refresh", "--index-url", srv.URL+"/whl")
	if code != 1 || !strings.Contains(stderr, "offline?") {
		t.Errorf("kb refresh offline: exit %d\n%s\n%s", code, out, stderr)
	}
	if d, _ := readKB(t, config); d.Newest.Minor != "2.16" {
		t.Errorf("a failed refresh lost what was learned: newest %q", d.Newest.Minor)
	}
}

func TestKBUsage(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"kb", "--help"}, 0, "gpucanary kb refresh [--index-url URL]"},
		{[]string{"kb", "bogus"}, 2, `"bogus" is not a kb command`},
		{[]string{"kb", "--index-url", "http://x"}, 2, "--index-url is for gpucanary kb refresh"},
		{[]string{"kb", "refresh", "--json"}, 2, "--json is for gpucanary kb"},
		{[]string{"kb", "refresh", "x"}, 2, "kb command"},
	} {
		out, stderr, code := runCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(out+stderr, tt.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s%s", tt.args, code, tt.code, tt.want, out, stderr)
		}
	}
}

// TestKnowledgeRefresherIsOptInAndDaily: the engine's refresh exists only
// with kb_refresh on, and reads the index only when the refresh overlay
// is a day old or missing.
func TestKnowledgeRefresherIsOptInAndDaily(t *testing.T) {
	config := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	asked := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked++
		w.Write([]byte(`<a href="x">torch-2.16.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl</a>`))
	}))
	defer srv.Close()
	g := &globals{cfg: cfgWith(srv.URL, false)}
	if g.knowledgeRefresher() != nil {
		t.Fatal("a refresher without kb_refresh")
	}
	g.cfg = cfgWith(srv.URL, true)
	refresh := g.knowledgeRefresher()
	for range 2 {
		if err := refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if asked != 1 {
		t.Errorf("the index was read %d times in a day", asked)
	}
	path := filepath.Join(config, "gpucanary", "kb-refresh.json")
	old := time.Now().Add(-25 * time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if err := refresh(context.Background()); err != nil || asked != 2 {
		t.Errorf("a day later: %v, read %d times", err, asked)
	}
}

func cfgWith(index string, on bool) config.Config {
	c := config.Default()
	c.IndexBase, c.KBRefresh = index, on
	return c
}
