package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTool writes an executable shell script called name into dir.
func fakeTool(t *testing.T, dir, name, script string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestMakeBuildSaysTheFirstBuildIsLong runs `make build` with a stand-in
// for go (it records being asked to build and answers `go list` as a
// fresh or a warm build cache would): on a fresh machine a line saying
// the first build of the GUI toolkit takes minutes comes before the
// build starts; once the cache holds it, nothing is added.
func TestMakeBuildSaysTheFirstBuildIsLong(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		stale string
		note  bool
	}{
		{"fresh machine", "false\ntrue\nfalse\n", true},
		{"warm cache", "false\nfalse\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := t.TempDir()
			fakeTool(t, bin, "go", `case "$1" in
list) printf '`+tc.stale+`' ;;
build) echo "GO-BUILD-STARTED" ;;
*) exit 0 ;;
esac
`)
			// deps.sh finds every package installed.
			fakeTool(t, bin, "dpkg-query", "echo 'install ok installed'\n")
			cmd := exec.Command("make", "--no-print-directory", "build", "GO="+filepath.Join(bin, "go"), "VERSION=test")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("make build: %v\n%s", err, out)
			}
			text := string(out)
			note := strings.Index(text, "compiling the GUI toolkit's C code (GLFW, OpenGL): several minutes on 2 cores the first time")
			build := strings.Index(text, "GO-BUILD-STARTED")
			if build < 0 {
				t.Fatalf("the build did not run:\n%s", text)
			}
			if tc.note && (note < 0 || note > build) {
				t.Errorf("no note before the first build:\n%s", text)
			}
			if !tc.note && note >= 0 {
				t.Errorf("a note although the cache is warm:\n%s", text)
			}
		})
	}
}

// TestDepsSaysItInstallsBeforeItDoes runs scripts/deps.sh with packages
// missing (stand-ins for dpkg-query and apt-get): the line saying what is
// installed, and that it takes a while, comes before apt-get starts.
func TestDepsSaysItInstallsBeforeItDoes(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("deps.sh calls apt-get through sudo when not root")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	fakeTool(t, bin, "dpkg-query", "exit 1\n")
	fakeTool(t, bin, "apt-get", `echo "APT-GET $*"`+"\n")
	cmd := exec.Command(filepath.Join(root, "scripts", "deps.sh"), "build")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("deps.sh: %v\n%s", err, out)
	}
	text := string(out)
	note := strings.Index(text, "deps: installing the missing Debian packages with apt-get (a minute or more on a fresh machine): gcc ")
	apt := strings.Index(text, "APT-GET update")
	if note < 0 || apt < 0 || note > apt {
		t.Errorf("the note does not come before apt-get:\n%s", text)
	}
}
