package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexTokenInQueryIsNeverShown: a mirror whose base carries its
// token in the query (issue 32, L10). The variant joins the base's path,
// before the query, and the token shows neither in the plan nor in what
// pip prints ("Looking in indexes: …?token=…"), on the terminal or in
// the journal.
func TestIndexTokenInQueryIsNeverShown(t *testing.T) {
	c := newFixCase(t, "")
	const secret = "t0ken-s3cret"
	base := c.base + "/?token=" + secret
	out, stderr, _ := runCLI(t, "--gpu-sim", simFile(t, simA100), "fix", "--yes", "--index-base", base, c.venv)
	journals, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_STATE_HOME"), "gpucanary", "journal", "*.jsonl"))
	if len(journals) != 1 {
		t.Fatalf("journals: %v\n%s\n%s", journals, out, stderr)
	}
	journal, err := os.ReadFile(journals[0])
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"fix": out + stderr, "journal": string(journal)} {
		if strings.Contains(text, secret) {
			t.Errorf("%s shows the index token:\n%s", name, text)
		}
	}
	for _, want := range []string{c.base + "/cu124?token=***", "Looking in indexes: " + c.base + "/cu124?token=***"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestIndexBaseIsCheckedAsTheSettingsAre: a --index-base the settings
// file would refuse is a usage error (exit 2) naming the flag, before
// anything is read or run (issue 32, L11); the same value in config.toml
// is refused too.
func TestIndexBaseIsCheckedAsTheSettingsAre(t *testing.T) {
	fixEnvSetup(t)
	// A CPU torch on an A100: without the check, the dry run planned a
	// reinstall from the bad index and exited 0.
	env := filepath.Join(t.TempDir(), "cpu")
	if err := writeSpec(env, incidentsSpec("uv-cpu-overwrite")); err != nil {
		t.Fatal(err)
	}
	sim := simFile(t, simA100)
	if out, _, code := runCLI(t, "--gpu-sim", sim, "fix", "--dry-run", env); code != exitOK || !strings.Contains(out, "Dry run") {
		t.Fatalf("the dry run with the default index: exit %d\n%s", code, out)
	}
	for _, base := range []string{"http://", "ftp://mirror/whl", "http://[::1", "https://mirror/whl\n--pre", "-rf", "mirror/whl"} {
		out, stderr, code := runCLI(t, "--gpu-sim", sim, "fix", "--dry-run", "--index-base", base, env)
		if code != exitUsage || !strings.Contains(stderr, "--index-base") || !strings.Contains(stderr, "is not an http(s) or file URL") {
			t.Errorf("--index-base %q: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", base, code, exitUsage, out, stderr)
		}
		cfg := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(cfg, []byte(fmt.Sprintf("index_base = %q\n", base)), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, stderr, code := runCLI(t, "--config", cfg, "--gpu-sim", sim, "fix", "--dry-run", env); code != exitUsage || !strings.Contains(stderr, "index_base") {
			t.Errorf("index_base %q in config.toml: exit %d, want %d\n%s", base, code, exitUsage, stderr)
		}
	}
}
