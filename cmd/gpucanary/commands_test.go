package main

import (
	"bytes"
	"context"
	"flag"
	"strings"
	"testing"
)

// usageBefore is the top-level usage as it was written by hand before the
// registry made it (with the agent and check's --format prom added since):
// the generated text must stay the same.
const usageBefore = `Usage: gpucanary [--gpu-sim FILE] [--config FILE] [COMMAND] [ARGS]

Without a command, GPU Canary starts in the system tray.

Commands:
  check [--json] [--format prom [--textfile PATH]] [PATH...]
                               inspect environments and the GPU; exit 1 on error findings
  ps [--json] [--watch]        per-process GPU use and verdicts
  watch [--json] [PATH...]     run the engine headless and print each event
  fix PATH [--dry-run] [--yes] [--variant cuNNN] [--index-base URL]
                               reinstall a CUDA torch in the environment at PATH
  report [-o DIR]              write the evidence bundle
  agent [--web.listen-address ADDR] [--web.config.file FILE] [--textfile PATH]
                               run the engine headless and serve Prometheus metrics
  version                      print the version

Global flags:
  --gpu-sim FILE   replace NVML with a simulated GPU (also GPUCANARY_GPU_SIM)
  --config FILE    settings file (default: the user config directory)
  --log-level L    debug, info, warn or error (default warn)
`

func TestUsageIsMadeFromTheRegistry(t *testing.T) {
	if got := usageText(); got != usageBefore {
		t.Errorf("usage:\n%s\nwant:\n%s", got, usageBefore)
	}
	seen := map[string]bool{}
	for _, c := range commands() {
		if c.name == "" || c.summary == "" || c.setup == nil {
			t.Errorf("incomplete entry %+v", c)
		}
		for _, n := range append([]string{c.name}, c.aliases...) {
			if seen[n] {
				t.Errorf("%q is registered twice", n)
			}
			seen[n] = true
			if got, ok := lookup(n); !ok || got.name != c.name {
				t.Errorf("lookup(%q) = %q, %v", n, got.name, ok)
			}
		}
		if !c.hidden && !strings.Contains(usageText(), "\n  "+c.synopsis()) {
			t.Errorf("%s is not listed", c.name)
		}
	}
}

// TestDispatch runs the commands whose answer needs no environment: each
// goes through the registry with today's texts and exit statuses.
func TestDispatch(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, tc := range []struct {
		name         string
		args         []string
		code         int
		stdout       string // the whole of it, when set
		stderrPrefix string
	}{
		{"help", []string{"help"}, 0, usageBefore, ""},
		{"--help after --", []string{"--", "--help"}, 0, usageBefore, ""},
		{"-h as a global flag", []string{"-h"}, 0, "", usageBefore},
		{"version", []string{"version"}, 0, versionLine(), ""},
		{"--version", []string{"--version"}, 0, versionLine(), ""},
		{"version ignores what follows", []string{"version", "--short", "x"}, 0, versionLine(), ""},
		{"unknown", []string{"frobnicate"}, 2, "", "gpucanary: unknown command \"frobnicate\"\n\n" + usageBefore},
		{"a command's own usage", []string{"watch", "--nope"}, 2, "", "flag provided but not defined: -nope\nUsage: gpucanary watch [--json] [--all] [PATH...]\n"},
		{"fix's two-line usage", []string{"fix"}, 2, "", "Usage: gpucanary fix PATH [--dry-run] [--yes] [--variant cuNNN] [--index-base URL] [--force] [--timeout D]\n       gpucanary fix --pin-index PATH [--variant cuNNN] [--index-base URL]\n"},
		{"ps takes no arguments", []string{"ps", "extra"}, 2, "", "gpucanary ps: takes no arguments\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := runCLI(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, stderr)
			}
			if tc.stdout != "" && out != tc.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, tc.stdout)
			}
			if !strings.HasPrefix(stderr, tc.stderrPrefix) {
				t.Errorf("stderr:\n%s\nwant it to start:\n%s", stderr, tc.stderrPrefix)
			}
		})
	}
}

// TestCommandWithItsOwnHelp: a command that writes its whole help shows
// it on --help and exits 0, and on a wrong flag shows it and exits 2; the
// others keep "Usage: gpucanary ..." and exit 2 on both.
func TestCommandWithItsOwnHelp(t *testing.T) {
	ran := false
	body := func(fs *flag.FlagSet, g *globals) runFunc {
		fs.Bool("x", false, "")
		return func(context.Context, stdio) int { ran = true; return exitOK }
	}
	helped := command{name: "demo", args: "[-x]", help: "Usage: gpucanary demo [-x]\n\nExamples:\n  gpucanary demo -x\n", setup: body}
	plain := command{name: "demo", args: "[-x]", setup: body}
	for _, tc := range []struct {
		name   string
		c      command
		args   []string
		code   int
		stderr string
	}{
		{"own help, --help", helped, []string{"--help"}, exitOK, helped.help},
		{"own help, a wrong flag", helped, []string{"--nope"}, exitUsage, "flag provided but not defined: -nope\n" + helped.help},
		{"usage line, --help", plain, []string{"--help"}, exitUsage, "Usage: gpucanary demo [-x]\n"},
		{"runs", plain, []string{"-x"}, exitOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran = false
			var out, errb bytes.Buffer
			code := tc.c.run(context.Background(), &globals{}, tc.args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
			if code != tc.code || errb.String() != tc.stderr {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tc.code, errb.String(), tc.stderr)
			}
			if ran != (tc.code == exitOK && tc.args[0] == "-x") {
				t.Errorf("body ran: %v", ran)
			}
		})
	}
}

// versionLine is what `version` and `--version` print in this test binary.
func versionLine() string {
	var b bytes.Buffer
	printVersion(&b)
	return b.String()
}
