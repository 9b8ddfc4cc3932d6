package fix

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// TestCauseLines quotes the installer's own words: its error lines, with
// uv's indented continuations, else its last lines.
func TestCauseLines(t *testing.T) {
	for _, tc := range []struct {
		name   string
		output string
		want   []string
	}{
		{"pip: no matching distribution (no network looks the same after its retries)",
			"Looking in indexes: https://download.pytorch.org/whl/cu124\n" +
				"WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError'\n" +
				"ERROR: Could not find a version that satisfies the requirement torch==2.5.1+cu124 (from versions: none)\n" +
				"ERROR: No matching distribution found for torch==2.5.1+cu124\n",
			[]string{"ERROR: Could not find a version that satisfies the requirement torch==2.5.1+cu124 (from versions: none)",
				"ERROR: No matching distribution found for torch==2.5.1+cu124"}},
		{"pip: disk full",
			"Collecting torch==2.5.1+cu124\n  Downloading https://x/torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl (908.2 MB)\n" +
				"Installing collected packages: torch\n" +
				"ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device\n\n",
			[]string{"ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device"}},
		{"uv: a fetch error and its causes",
			"Resolved 3 packages in 1.20s\nerror: Failed to fetch: `https://download.pytorch.org/whl/cu124/torch/`\n" +
				"  Caused by: Request failed after 3 retries\n  Caused by: error sending request for url\nnot part of it\n",
			[]string{"error: Failed to fetch: `https://download.pytorch.org/whl/cu124/torch/`", "Caused by: Request failed after 3 retries", "Caused by: error sending request for url"}},
		{"uv: no solution",
			"  × No solution found when resolving dependencies:\n  ╰─▶ Because torch==9.9 was not found in the package registry and you require torch==9.9, we can conclude that your requirements are unsatisfiable.\n",
			[]string{"× No solution found when resolving dependencies:", "╰─▶ Because torch==9.9 was not found in the package registry and you require torch==9.9, we can conclude that your requirements are unsatisfiable."}},
		{"no error lines: the last lines",
			"one\ntwo\nthree\nfour\nfive\nsix\nKilled\n",
			[]string{"three", "four", "five", "six", "Killed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c causeLines
			for _, l := range strings.Split(tc.output, "\n") {
				c.add(l)
			}
			if got := c.lines(); !slices.Equal(got, tc.want) {
				t.Errorf("cause = %q\nwant    %q", got, tc.want)
			}
		})
	}
	t.Run("bounded", func(t *testing.T) {
		var c causeLines
		for i := 0; i < 10000; i++ {
			c.add("ERROR: again")
		}
		if len(c.lines()) != maxCauseLines || cap(c.errors) > 4*maxCauseLines {
			t.Errorf("kept %d lines (cap %d)", len(c.lines()), cap(c.errors))
		}
	})
}

// TestFailedRunExplainsItself: an installer that fails without changing
// anything gives its own error lines as the cause and no rollback (there
// is nothing to put back); one that fails after changing the environment
// gives a rollback.
func TestFailedRunExplainsItself(t *testing.T) {
	if _, err := exec.LookPath("cp"); err != nil {
		t.Skip("no cp")
	}
	gpuNow := func(context.Context) gpu.State { return a100Driver550 }
	s := Service{GPU: gpuNow}
	ctx := context.Background()

	c := newRunCase(t, s)
	c.plan.Argv = []string{"/bin/sh", "-c", `echo "Looking in indexes: x"; echo "ERROR: No matching distribution found for torch==2.5.1+cu124" >&2; exit 1`}
	res, err := s.Run(ctx, c.plan, nil)
	if err != nil || res.Fixed || res.ExitCode != 1 {
		t.Fatalf("res = %+v, err = %v", res, err)
	}
	if !slices.Equal(res.Cause, []string{"ERROR: No matching distribution found for torch==2.5.1+cu124"}) {
		t.Errorf("cause = %q", res.Cause)
	}
	if res.Rollback != "" {
		t.Errorf("a rollback is offered although nothing changed: %q", res.Rollback)
	}

	// This one replaces torch, then fails on a companion.
	c = newRunCase(t, s)
	c.plan.Argv[2] = `rm -rf "$1" && cp -R "$2" "$1"; echo "ERROR: torchvision failed" >&2; exit 1`
	res, err = s.Run(ctx, c.plan, nil)
	if err != nil || res.Fixed || res.After["torch"] == res.Before["torch"] {
		t.Fatalf("res = %+v, err = %v", res, err)
	}
	if !strings.Contains(res.Rollback, "torch==2.5.1+cpu") || len(res.Cause) != 1 {
		t.Errorf("changed and failed: rollback %q, cause %q", res.Rollback, res.Cause)
	}
}
