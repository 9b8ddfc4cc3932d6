//go:build !nogui

package main

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// TestStrayOutputStaysOffTheLink writes to descriptor 1 the way C code
// would, after the link has been taken, in a child process, and checks
// that the link carries only what was written to it.
func TestStrayOutputStaysOffTheLink(t *testing.T) {
	if os.Getenv("GPUCANARY_LINKOUT_CHILD") == "1" {
		link, err := takeLinkOut()
		if err != nil {
			os.Stderr.WriteString("takeLinkOut: " + err.Error())
			os.Exit(2)
		}
		unix.Write(1, []byte("stray from C\n"))
		os.Stdout.WriteString("stray from Go\n")
		link.WriteString("on the link\n")
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStrayOutputStaysOffTheLink$")
	cmd.Env = append(os.Environ(), "GPUCANARY_LINKOUT_CHILD=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\nstderr: %s", err, stderr.String())
	}
	if got := stdout.String(); got != "on the link\n" {
		t.Errorf("the link carried %q", got)
	}
	for _, want := range []string{"stray from C\n", "stray from Go\n"} {
		if !bytes.Contains(stderr.Bytes(), []byte(want)) {
			t.Errorf("stderr lacks %q: %q", want, stderr.String())
		}
	}
}
