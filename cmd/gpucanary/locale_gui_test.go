//go:build !nogui

package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestNoLocaleNoise runs the GUI build's commands under the locales of
// Docker's Python images and of minimal systems: nothing the user did
// not ask for reaches stderr (Fyne's "Error parsing user locale" lines,
// printed while its packages initialize, before main), and every command
// sees the locale as the user set it.
func TestNoLocaleNoise(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	empty, sim := t.TempDir(), simFile(t, simA100)
	// Fyne's noise comes while its packages initialize, whatever the
	// command: every locale starts a command that only prints and one
	// that reads; the other commands run under the first locale only
	// (each start of this GUI test binary under -race is about a second).
	every := [][]string{{"version"}, {"--gpu-sim", sim, "check", "--json", empty}}
	once := [][]string{{"--version"}, {"help"}, {"check", "--help"}, {"help", "ps"}}
	for i, locale := range []string{"C.UTF-8", "C", "POSIX.UTF-8", "en_US.UTF-8"} {
		commands := every
		if i == 0 {
			commands = append(commands, once...)
		}
		for _, args := range commands {
			t.Run(locale+" "+strings.Join(args, " "), func(t *testing.T) {
				cmd := programCommand(t, args...)
				cmd.Env = append(withoutLocale(cmd.Env), "LANG="+locale)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				// check exits 1 on the error finding of the folder that is
				// no environment; only a usage error (2) is wrong here.
				if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != exitFound {
					t.Fatalf("%v\n%s", err, stderr.String())
				}
				if stderr.Len() > 0 {
					t.Errorf("stderr holds what was not asked for:\n%s", stderr.String())
				}
			})
		}
		t.Run(locale+" restored", func(t *testing.T) {
			cmd := programCommand(t)
			cmd.Env = append(withoutLocale(cmd.Env), "LANG="+locale, printLocaleEnv+"=1")
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != "LANG="+locale+"\n" {
				t.Errorf("the program runs with %q, the user set LANG=%s", out, locale)
			}
		})
	}
}

// printLocaleEnv makes the test binary print LANG as main would see it
// (after every package's init) and exit.
const printLocaleEnv = "GPUCANARY_TEST_PRINT_LOCALE"

func init() {
	if os.Getenv(printLocaleEnv) == "1" {
		os.Stdout.WriteString("LANG=" + os.Getenv("LANG") + "\n")
		os.Exit(0)
	}
}

func withoutLocale(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "LC_") && !strings.HasPrefix(kv, "LANG=") && !strings.HasPrefix(kv, "LANGUAGE=") {
			out = append(out, kv)
		}
	}
	return out
}
