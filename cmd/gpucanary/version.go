package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// commit and buildDate are stamped by the Makefile with -ldflags
// "-X main.commit=… -X main.buildDate=…", beside main.version, so a user's
// `gpucanary --version` names the exact source a report came from. A plain
// `go build` or `go install` leaves them empty; buildStamp then falls back
// to what the Go toolchain recorded in the binary.
var (
	commit    = ""
	buildDate = ""
)

// build is what `version` and `--version` print.
type build struct {
	Version, Commit, Date, Go string
}

// String is one line: "gpucanary 0.1.0 (commit 1755299, built 2025-11-23T09:00:00Z, go1.26.8)";
// a part that is not known is left out.
func (b build) String() string {
	var parts []string
	if b.Commit != "" {
		parts = append(parts, "commit "+b.Commit)
	}
	if b.Date != "" {
		parts = append(parts, "built "+b.Date)
	}
	if b.Go != "" {
		parts = append(parts, b.Go)
	}
	s := "gpucanary " + b.Version
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// buildStamp combines the -ldflags stamps with the build information the
// toolchain embeds (the module version of `go install …@v1.2.3`, and the
// VCS revision and time when the build could see the repository).
func buildStamp(version, commit, date string, info *debug.BuildInfo) build {
	b := build{Version: version, Commit: commit, Date: date}
	if info == nil {
		return b
	}
	b.Go = info.GoVersion
	if (b.Version == "" || b.Version == "dev") && info.Main.Version != "" && info.Main.Version != "(devel)" {
		b.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && b.Commit == "":
			b.Commit = s.Value[:min(len(s.Value), 12)]
		case s.Key == "vcs.time" && b.Date == "":
			b.Date = s.Value
		}
	}
	return b
}

// printVersion writes the version line of this binary.
func printVersion(w io.Writer) {
	info, _ := debug.ReadBuildInfo()
	fmt.Fprintln(w, buildStamp(version, commit, buildDate, info))
}

// versionRequested reports whether the command line asks only for the
// version the way most programs take it (`gpucanary --version`).
func versionRequested(args []string) bool {
	return len(args) == 1 && (args[0] == "--version" || args[0] == "-version")
}
