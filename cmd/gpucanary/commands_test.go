package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// usageWant is the top-level usage the registry makes: each command's
// forms as its help's usage lines write them, then its summary.
const usageWant = `Usage: gpucanary [--gpu-sim FILE] [--config FILE] [COMMAND] [ARGS]

Without a command, GPU Canary starts in the system tray.

Commands:
  check [--json] [--format text|json|prom [--textfile PATH]] [PATH...]
                               inspect environments and the GPU; exit 1 on error findings
  ps [--json] [--watch] [-w]   per-process GPU use and verdicts
  watch [--json] [--all] [PATH...]
                               run the engine headless and print each event
  wait [--json] PID...         wait until processes end and say how each did: finished or crashed, and why
  fix PATH [--dry-run] [--yes] [--variant cuNNN] [--index-base URL] [--llama-index-base URL] [--force] [--timeout D]
  fix --pin-index PATH [--variant cuNNN] [--index-base URL]
                               reinstall a CUDA torch in the environment at PATH, or pin its CUDA index
  guard PATH                   keep the environment's CUDA torch from being replaced by later installs
  unguard [--force] PATH       lift that guard, giving the environment back byte for byte
  report [-o DIR] [PATH...]
  report --job PID [-o DIR]    write the evidence bundle
  agent [--web.listen-address ADDR] [--web.config.file FILE] [--textfile PATH] [PATH...]
  agent --collector.processes [--collector.processes.max N] [PATH...]
                               run the engine headless and serve Prometheus metrics
  kb refresh [--index-url URL]
  kb [--json]                  what GPU Canary knows of torch and drivers; refresh learns new releases
  demo [--cli] [--dir DIR]     try GPU Canary on a demonstration home and simulated GPUs
  quit [--timeout D]           ask this session's tray to quit, and wait until it has
  version                      print the version

Global flags:
  --gpu-sim FILE   replace NVML with a simulated GPU (also GPUCANARY_GPU_SIM)
  --config FILE    settings file (default: the user config directory)
  --log-level L    debug, info, warn or error (default warn)
  --version        print the version

Run 'gpucanary help COMMAND' (or 'gpucanary COMMAND --help') for a
command's flags and examples.
`

// TestUsageNamesEveryFlag: the top-level usage lists, for each command,
// every flag it declares (but --gpu-sim, a global flag listed below the
// commands) and its operands: PATH... for any number, PATH for one.
func TestUsageNamesEveryFlag(t *testing.T) {
	usage := usageText()
	for _, c := range commands() {
		if c.hidden {
			continue
		}
		forms := c.synopses()
		listed := strings.Join(forms, "\n")
		for _, f := range forms {
			if !strings.Contains(usage, "\n  "+f) {
				t.Errorf("%s: %q is not in the usage", c.name, f)
			}
		}
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.setup(fs, &globals{})
		fs.VisitAll(func(f *flag.Flag) {
			if f.Name == "gpu-sim" {
				return
			}
			name := "--" + f.Name
			if len(f.Name) == 1 {
				name = "-" + f.Name
			}
			if !regexp.MustCompile(`\[?` + regexp.QuoteMeta(name) + `[ \]\n]`).MatchString(listed + "\n") {
				t.Errorf("%s: the usage does not name %s: %q", c.name, name, listed)
			}
		})
		word := "PATH"
		if c.operands.what == "PID" {
			word = "PID"
		}
		switch {
		case c.operands.max < 0 && !strings.Contains(listed, word+"..."):
			t.Errorf("%s takes any number of %ss; the usage says %q", c.name, word, listed)
		case c.operands.min > 0 && !strings.Contains(listed, word):
			t.Errorf("%s needs a %s; the usage says %q", c.name, word, listed)
		}
	}
}

func TestUsageIsMadeFromTheRegistry(t *testing.T) {
	if got := usageText(); got != usageWant {
		t.Errorf("usage:\n%s\nwant:\n%s", got, usageWant)
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
		if !c.hidden && !strings.Contains(usageText(), "\n  "+c.synopses()[0]) {
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
		{"help", []string{"help"}, 0, usageWant, ""},
		{"--help after --", []string{"--", "--help"}, 0, usageWant, ""},
		{"-h as a global flag", []string{"-h"}, 0, usageWant, ""},
		{"--help as a global flag", []string{"--help"}, 0, usageWant, ""},
		{"help COMMAND", []string{"help", "watch"}, 0, watchHelp, ""},
		{"COMMAND --help", []string{"fix", "--help"}, 0, fixHelp, ""},
		{"COMMAND -h after an argument", []string{"check", "./venv", "-h"}, 0, checkHelp, ""},
		{"version --help", []string{"version", "--help"}, 0, versionHelp, ""},
		{"help help", []string{"help", "help"}, 0, helpHelp, ""},
		{"help of no command", []string{"help", "frobnicate"}, 2, "", "gpucanary help: no command \"frobnicate\"\n\n" + usageWant},
		{"a wrong global flag", []string{"--nope"}, 2, "", "gpucanary: flag provided but not defined: --nope\n" + usageWant},
		{"version", []string{"version"}, 0, versionLine(), ""},
		{"--version", []string{"--version"}, 0, versionLine(), ""},
		{"version takes no arguments", []string{"version", "extra"}, 2, "", "gpucanary version: takes no arguments, got 1: extra\n" + versionHelp},
		{"version takes no flags", []string{"version", "--short"}, 2, "", "gpucanary version: flag provided but not defined: --short\n" + versionHelp},
		{"unknown", []string{"frobnicate"}, 2, "", "gpucanary: unknown command \"frobnicate\"\n\n" + usageWant},
		{"a command's own usage", []string{"watch", "--nope"}, 2, "", "gpucanary watch: flag provided but not defined: --nope\n" + watchHelp},
		{"fix without a path", []string{"fix"}, 2, "", "gpucanary fix: needs exactly one environment path, got none\n" + fixHelp},
		{"fix with two paths", []string{"fix", "A", "B", "--dry-run"}, 2, "", "gpucanary fix: needs exactly one environment path, got 2: A B\n" + fixHelp},
		{"a path as it was typed", []string{"fix", "my env", "B"}, 2, "", "gpucanary fix: needs exactly one environment path, got 2: 'my env' B\n"},
		{"ps takes no arguments", []string{"ps", "extra"}, 2, "", "gpucanary ps: takes no arguments, got 1: extra\n" + psHelp},
		{"help takes one command", []string{"help", "fix", "extra"}, 2, "", "gpucanary help: takes at most one command name, got 2: fix extra\n" + helpHelp},
		{"--timeout 0s", []string{"fix", "--timeout", "0s", "/x"}, 2, "", "gpucanary fix: invalid value \"0s\" for flag --timeout: want a duration above zero, such as 45m or 2h\n" + fixHelp},
		{"--timeout -5m", []string{"fix", "/x", "--timeout", "-5m"}, 2, "", "gpucanary fix: invalid value \"-5m\" for flag --timeout: want a duration above zero, such as 45m or 2h\n"},
		{"--timeout=-1s", []string{"fix", "--timeout=-1s", "/x"}, 2, "", "gpucanary fix: invalid value \"-1s\" for flag --timeout: want a duration above zero"},
		{"--timeout not a duration", []string{"fix", "--timeout", "soon", "/x"}, 2, "", "gpucanary fix: invalid value \"soon\" for flag --timeout: not a duration: want one such as 45m or 2h\n"},
		{"--json and --format prom", []string{"check", "--json", "--format", "prom"}, 2, "", "gpucanary check: --json and --format prom ask for two outputs: give one of them\n"},
		{"--format text and --json", []string{"check", "--format=text", "--json"}, 2, "", "gpucanary check: --json and --format text ask for two outputs"},
		{"a flag without its value", []string{"check", "--format"}, 2, "", "gpucanary check: flag needs an argument: --format\n" + checkHelp},
		{"a bad boolean", []string{"ps", "--json=maybe"}, 2, "", "gpucanary ps: invalid boolean value \"maybe\" for --json: parse error\n"},
		{"a one-letter flag keeps one dash", []string{"report", "-o"}, 2, "", "gpucanary report: flag needs an argument: -o\n"},
		{"a dotted flag", []string{"agent", "--web.listen-address"}, 2, "", "gpucanary agent: flag needs an argument: --web.listen-address\n"},
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
		{"own help, a wrong flag", helped, []string{"--nope"}, exitUsage, "", "gpucanary demo: flag provided but not defined: --nope\n" + helped.help},
		{"usage line, --help", plain, []string{"--help"}, exitOK, "Usage: gpucanary demo [-x]\n", ""},
		{"usage line, a wrong flag", plain, []string{"--nope"}, exitUsage, "", "gpucanary demo: flag provided but not defined: --nope\nUsage: gpucanary demo [-x]\n"},
		{"an argument it does not take", plain, []string{"-x", "extra"}, exitUsage, "", "gpucanary demo: takes no arguments, got 1: extra\nUsage: gpucanary demo [-x]\n"},
		{"runs", plain, []string{"-x"}, exitOK, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran = false
			var out, errb bytes.Buffer
			code := tc.c.run(context.Background(), &globals{}, tc.args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
			if code != tc.code || out.String() != tc.stdout || errb.String() != tc.stderr {
				t.Errorf("exit %d (want %d), stdout %q (want %q), stderr %q (want %q)", code, tc.code, out.String(), tc.stdout, errb.String(), tc.stderr)
			}
			if ran != (tc.code == exitOK && tc.args[0] == "-x" && len(tc.args) == 1) {
				t.Errorf("body ran: %v", ran)
			}
		})
	}
}

// TestEveryCommandCountsItsArguments walks the registry: a command given
// one argument more than it takes (or, for fix, none) says so in one line
// naming them, then shows its help on stderr, and exits 2 without
// running.
func TestEveryCommandCountsItsArguments(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, c := range commands() {
		o := c.operands
		var tries [][]string
		if o.max >= 0 {
			tries = append(tries, slices.Repeat([]string{"extra"}, o.max+1))
		}
		if o.min > 0 {
			tries = append(tries, slices.Repeat([]string{"extra"}, o.min-1))
		}
		if len(tries) == 0 {
			continue // takes any number of PATHs
		}
		for _, args := range tries {
			t.Run(c.name+" "+strings.Join(args, " "), func(t *testing.T) {
				_, stderr, code := runCLI(t, append([]string{c.name}, args...)...)
				line, help, _ := strings.Cut(stderr, "\n")
				if code != exitUsage || help != c.helpText() {
					t.Errorf("exit %d, stderr:\n%s", code, stderr)
				}
				want := "got none"
				if len(args) > 0 {
					want = fmt.Sprintf("got %d: %s", len(args), strings.Join(args, " "))
				}
				if !strings.HasPrefix(line, "gpucanary "+c.name+": ") || !strings.HasSuffix(line, want) {
					t.Errorf("the error line %q does not say %q", line, want)
				}
			})
		}
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
