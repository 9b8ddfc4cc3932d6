package main

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildStamp(t *testing.T) {
	vcs := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "1755299c0ffee1755299c0ffee1755299c0ffee0"},
		{Key: "vcs.time", Value: "2025-11-20T10:00:00Z"},
	}}
	tests := []struct {
		name                  string
		version, commit, date string
		info                  *debug.BuildInfo
		want                  string
	}{
		{"stamped by the Makefile", "0.1.0+3.g1755299", "1755299", "2025-11-23T09:00:00Z", vcs,
			"gpucanary 0.1.0+3.g1755299 (commit 1755299, built 2025-11-23T09:00:00Z, go1.26.8)"},
		{"plain go build in a checkout", "dev", "", "", vcs,
			"gpucanary dev (commit 1755299c0ffe, built 2025-11-20T10:00:00Z, go1.26.8)"},
		{"go install at a tag", "dev", "", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.2.0"}},
			"gpucanary v0.2.0 (go1.26.8)"},
		{"no build information", "dev", "", "", nil, "gpucanary dev"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := buildStamp(tt.version, tt.commit, tt.date, tt.info).String(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}, {"--log-level", "error", "version"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
			if code != exitOK || !strings.HasPrefix(out.String(), "gpucanary ") || strings.Count(out.String(), "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0 and one line starting with \"gpucanary \"", code, out.String(), errb.String())
			}
		})
	}
}
