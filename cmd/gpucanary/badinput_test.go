package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInputIsNeverSilent: a file named by a global flag that is
// missing or malformed, and a malformed settings file, stop a command
// with exit status 2 and a message naming the file and what is wrong;
// before, a garbage scenario read as "no NVIDIA driver" and exited 0, and
// a missing one said nothing.
func TestBadInputIsNeverSilent(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("{garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	badTOML := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(badTOML, []byte("refresh = \"soon\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(dir, "env")
	if err := writeSpec(env, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	good := simFile(t, simA100)
	// Audit issue 3: JSON that encoding/json alone takes.
	null, wrongCase, banana := simFile(t, "null"),
		simFile(t, `{"Driver": "550.54.15", "cuda_driver": "12.4", "devices": [{"NAME": "A100", "compute_capability": "8.0"}]}`),
		simFile(t, `{"driver": "550.54.15", "cuda_driver": "12.4", "devices": [{"name": "A100", "compute_capability": "banana"}]}`)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want []string // in stderr
	}{
		{"malformed scenario, check", nil, []string{"--gpu-sim", garbage, "check", env}, []string{garbage, "invalid scenario JSON"}},
		{"null scenario", nil, []string{"--gpu-sim", null, "check", env}, []string{null, "the scenario is null, not a JSON object"}},
		{"wrong-case keys", nil, []string{"--gpu-sim", wrongCase, "check", env}, []string{wrongCase, `unknown field "Driver"`}},
		{"compute capability banana", nil, []string{"--gpu-sim", banana, "ps"}, []string{banana, `compute_capability "banana" is not a compute capability`}},
		{"missing scenario, ps", nil, []string{"--gpu-sim", "/nope.json", "ps"}, []string{"/nope.json", "no such file"}},
		{"missing scenario after the command", nil, []string{"ps", "--gpu-sim", "/nope.json"}, []string{"/nope.json"}},
		{"scenario from the environment", map[string]string{"GPUCANARY_GPU_SIM": garbage}, []string{"check", env}, []string{garbage, "GPUCANARY_GPU_SIM"}},
		{"missing --config", nil, []string{"--gpu-sim", good, "--config", "/nope.toml", "check", env}, []string{"/nope.toml", "does not exist"}},
		{"malformed --config", nil, []string{"--gpu-sim", good, "--config", badTOML, "check", env}, []string{badTOML, "soon"}},
		{"malformed default settings", map[string]string{"XDG_CONFIG_HOME": "$BROKEN"}, []string{"--gpu-sim", good, "watch", env}, []string{"config.toml", "soon"}},
		{"agent", nil, []string{"--gpu-sim", garbage, "agent"}, []string{garbage}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			t.Setenv("GPUCANARY_GPU_SIM", "")
			for k, v := range tc.env {
				if v == "$BROKEN" {
					v = t.TempDir()
					if err := os.MkdirAll(filepath.Join(v, "gpucanary"), 0o700); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(v, "gpucanary", "config.toml"), []byte("refresh = \"soon\"\n"), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				t.Setenv(k, v)
			}
			out, stderr, code := runCLI(t, tc.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if out != "" {
				t.Errorf("printed a result from bad input:\n%s", out)
			}
		})
	}
	t.Run("a missing default settings file is the defaults", func(t *testing.T) {
		t.Setenv("XDG_CONFIG_HOME", t.TempDir())
		if _, stderr, code := runCLI(t, "--gpu-sim", good, "check", env); code != exitOK {
			t.Errorf("exit %d:\n%s", code, stderr)
		}
	})
}
