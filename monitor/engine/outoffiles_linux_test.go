//go:build linux

package engine_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// exhaustFiles opens /dev/null until this process has no file descriptor
// left (its soft limit lowered to 512 so that this is quick) and returns
// a function that closes them and puts the limit back.
func exhaustFiles(t *testing.T) (release func()) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = min(old.Cur, 512)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	var held []int
	for {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EMFILE {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, fd)
	}
	done := false
	release = func() {
		if done {
			return
		}
		done = true
		for _, fd := range held {
			syscall.Close(fd)
		}
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	}
	t.Cleanup(release)
	return release
}

// TestOutOfFilesIsNotAFinding: reads that run out of file descriptors
// (a flood of connections to the agent) say nothing about the
// environments: a watched one keeps its last reading and no
// ENV_UNREADABLE, a new one is not added as unreadable; once
// descriptors are back, the new one is read and added as it is.
func TestOutOfFilesIsNotAFinding(t *testing.T) {
	root := t.TempDir()
	watched, created := filepath.Join(root, "a", ".venv"), filepath.Join(root, "b", ".venv")
	spec := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}}
	if err := pyenvtest.Write(watched, spec); err != nil {
		t.Fatal(err)
	}
	e := monitortest.Start(t, engine.Options{Paths: []string{watched}, Clock: monitortest.NewClock(time.Now())})
	if v := torchOf(t, e.M, watched); v != "2.5.1+cu121" {
		t.Fatalf("first read: torch %q", v)
	}
	if err := pyenvtest.Write(created, spec); err != nil {
		t.Fatal(err)
	}

	release := exhaustFiles(t)
	errs := []error{engine.ReadNow(e.M, watched), engine.ReadNow(e.M, created)}
	release()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	st := e.M.State()
	for _, r := range st.Envs {
		if r.Path == created {
			t.Errorf("an environment read without file descriptors was added: %+v", r.Findings)
		}
		for _, f := range r.Findings {
			if f.Code == finding.CodeEnvUnreadable || f.Code == finding.CodeTorchInstallBroken {
				t.Errorf("%s: %s raised from a read without file descriptors: %s", r.Path, f.Code, f.Message)
			}
		}
	}
	if v := torchOf(t, e.M, watched); v != "2.5.1+cu121" {
		t.Errorf("the watched environment's reading was not kept: torch %q", v)
	}

	if err := engine.ReadNow(e.M, created); err != nil {
		t.Fatal(err)
	}
	if v := torchOf(t, e.M, created); v != "2.5.1+cu121" {
		t.Errorf("the new environment, read with descriptors back: torch %q", v)
	}
	e.Stop()
	if d := e.Dump(); strings.Contains(d, finding.CodeEnvUnreadable) {
		t.Errorf("events name %s:\n%s", finding.CodeEnvUnreadable, d)
	}
}
