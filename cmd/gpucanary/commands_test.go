package main

import (
	"bytes"
	"context"
	"flag"
	"regexp"
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
  --version        print the version

Run 'gpucanary help COMMAND' (or 'gpucanary COMMAND --help') for a
command's flags and examples.
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
		{"-h as a global flag", []string{"-h"}, 0, usageBefore, ""},
		{"--help as a global flag", []string{"--help"}, 0, usageBefore, ""},
		{"help COMMAND", []string{"help", "watch"}, 0, watchHelp, ""},
		{"COMMAND --help", []string{"fix", "--help"}, 0, fixHelp, ""},
		{"COMMAND -h after an argument", []string{"check", "./venv", "-h"}, 0, checkHelp, ""},
		{"version --help", []string{"version", "--help"}, 0, versionHelp, ""},
		{"help help", []string{"help", "help"}, 0, helpHelp, ""},
		{"help of no command", []string{"help", "frobnicate"}, 2, "", "gpucanary help: no command \"frobnicate\"\n\n" + usageBefore},
		{"a wrong global flag", []string{"--nope"}, 2, "", "flag provided but not defined: -nope\n" + usageBefore},
		{"version", []string{"version"}, 0, versionLine(), ""},
		{"--version", []string{"--version"}, 0, versionLine(), ""},
		{"version ignores what follows", []string{"version", "--short", "x"}, 0, versionLine(), ""},
		{"unknown", []string{"frobnicate"}, 2, "", "gpucanary: unknown command \"frobnicate\"\n\n" + usageBefore},
		{"a command's own usage", []string{"watch", "--nope"}, 2, "", "flag provided but not defined: -nope\n" + watchHelp},
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

// TestCommandWithItsOwnHelp: a command shows its whole help on stdout on
// --help and exits 0, and on stderr on a wrong flag and exits 2; one
// without a help text shows its usage line the same way.
func TestCommandWithItsOwnHelp(t *testing.T) {
	ran := false
	body := func(fs *flag.FlagSet, g *globals) runFunc {
		fs.Bool("x", false, "")
		return func(context.Context, stdio) int { ran = true; return exitOK }
	}
	helped := command{name: "demo", args: "[-x]", help: "Usage: gpucanary demo [-x]\n\nExamples:\n  gpucanary demo -x\n", setup: body}
	plain := command{name: "demo", args: "[-x]", setup: body}
	for _, tc := range []struct {
		name           string
		c              command
		args           []string
		code           int
		stdout, stderr string
	}{
		{"own help, --help", helped, []string{"--help"}, exitOK, helped.help, ""},
		{"own help, a wrong flag", helped, []string{"--nope"}, exitUsage, "", "flag provided but not defined: -nope\n" + helped.help},
		{"usage line, --help", plain, []string{"--help"}, exitOK, "Usage: gpucanary demo [-x]\n", ""},
		{"usage line, a wrong flag", plain, []string{"--nope"}, exitUsage, "", "flag provided but not defined: -nope\nUsage: gpucanary demo [-x]\n"},
		{"runs", plain, []string{"-x"}, exitOK, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran = false
			var out, errb bytes.Buffer
			code := tc.c.run(context.Background(), &globals{}, tc.args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
			if code != tc.code || out.String() != tc.stdout || errb.String() != tc.stderr {
				t.Errorf("exit %d (want %d), stdout %q (want %q), stderr %q (want %q)", code, tc.code, out.String(), tc.stdout, errb.String(), tc.stderr)
			}
			if ran != (tc.code == exitOK && tc.args[0] == "-x") {
				t.Errorf("body ran: %v", ran)
			}
		})
	}
}

// TestEveryFlagIsDocumented walks the registry: every command has a help
// with examples and an exit status, every flag it declares is in it
// (--name, or -o for one letter) as an entry of its Flags list, and
// `gpucanary CMD --help` and `gpucanary help CMD` print it and exit 0.
func TestEveryFlagIsDocumented(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			if !strings.HasPrefix(c.help, "Usage: gpucanary "+c.name) {
				t.Errorf("no help, or it does not start with its usage:\n%s", c.help)
			}
			for _, part := range []string{"\nExamples:\n  gpucanary ", "\nExit status: "} {
				if !strings.Contains(c.help, part) {
					t.Errorf("the help has no %q:\n%s", strings.TrimSpace(part), c.help)
				}
			}
			fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
			c.setup(fs, &globals{})
			n := 0
			fs.VisitAll(func(f *flag.Flag) {
				n++
				name := "--" + f.Name
				if len(f.Name) == 1 {
					name = "-" + f.Name
				}
				if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(name) + `\b`).MatchString(c.help) {
					t.Errorf("flag %s is not in the help's flags:\n%s", name, c.help)
				}
			})
			if n > 0 && !strings.Contains(c.help, "\nFlags:\n") {
				t.Errorf("%d flags and no Flags list", n)
			}
			for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
				out, stderr, code := runCLI(t, args...)
				if code != exitOK || out != c.help || stderr != "" {
					t.Errorf("gpucanary %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, stderr)
				}
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
