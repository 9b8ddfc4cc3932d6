package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseShlibs(t *testing.T) {
	tests := []struct {
		name, out string
		want      []string
		wantErr   bool
	}{
		{"tray", "shlibs:Depends=libc6 (>= 2.34), libgl1, libx11-6 (>= 2:1.2.99.901)\n",
			[]string{"libc6 (>= 2.34)", "libgl1", "libx11-6 (>= 2:1.2.99.901)"}, false},
		{"cli", "shlibs:Depends=libc6 (>= 2.34)\n", []string{"libc6 (>= 2.34)"}, false},
		{"nothing printed", "", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseShlibs(tt.out)
			if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseShlibs(%q) = %q, %v; want %q (error %v)", tt.out, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestFoldApache2(t *testing.T) {
	apache, err := os.ReadFile("../../../LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	withOwner := strings.Replace(string(apache), "Copyright [yyyy] [name of copyright owner]", "Copyright 2014 Brave New Software Project, Inc.", 1)
	tests := []struct {
		name, text   string
		want, reject []string
	}{
		{"the bare licence", string(apache), []string{"/usr/share/common-licenses/Apache-2.0"}, []string{"TERMS AND CONDITIONS", "[yyyy]"}},
		{"with its owner filled in", withOwner, []string{"Copyright 2014 Brave New Software Project, Inc.", "/usr/share/common-licenses/Apache-2.0"}, []string{"TERMS AND CONDITIONS"}},
		{"MIT stays whole", "MIT License\n\nCopyright (c) 2020 X\n\nPermission is hereby granted", []string{"Permission is hereby granted"}, []string{"common-licenses"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := foldApache2(tt.text)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("result lacks %q:\n%s", w, got)
				}
			}
			for _, r := range tt.reject {
				if strings.Contains(got, r) {
					t.Errorf("result holds %q:\n%s", r, got)
				}
			}
		})
	}
}

func TestCopyrightFile(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("licenses.tsv", "# library\tversion\tlicence\nexample.com/a\tv1.0.0\tMIT\ngo\tgo1.26.8\tBSD-3-Clause\n")
	write("example.com/a/LICENSE", "MIT text of a\n")
	write("example.com/a/font/OFL.txt", "font licence\n")
	write("go/LICENSE", "Go's BSD text\n")
	got, err := copyrightFile("gpucanary-cli", "/usr/bin/gpucanary-cli", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"/usr/share/common-licenses/Apache-2.0", "example.com/a  MIT", "go             BSD-3-Clause",
		"example.com/a/LICENSE\n", "MIT text of a", "example.com/a/font/OFL.txt", "font licence", "Go's BSD text"} {
		if !strings.Contains(got, w) {
			t.Errorf("copyright lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "# library") {
		t.Errorf("copyright holds the index's header:\n%s", got)
	}
	write("licenses.tsv", "# library\tversion\tlicence\n")
	if _, err := copyrightFile("gpucanary-cli", "/usr/bin/gpucanary-cli", dir); err == nil {
		t.Error("an empty index gave no error")
	}
}

func TestParseRequires(t *testing.T) {
	out := "libc.so.6(GLIBC_2.34)(64bit)\nlibGL.so.1()(64bit)\nlibc.so.6()(64bit)\nlibc.so.6(GLIBC_2.34)(64bit)\nrtld(GNU_HASH)\n"
	got, err := parseRequires(out)
	want := []string{"libGL.so.1()(64bit)", "libc.so.6()(64bit)", "libc.so.6(GLIBC_2.34)(64bit)", "rtld(GNU_HASH)"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("parseRequires = %q, %v; want %q", got, err, want)
	}
	if _, err := parseRequires("\n"); err == nil {
		t.Error("parseRequires of nothing: no error")
	}
}

func TestArchPackages(t *testing.T) {
	got, err := archPackages([]string{"libGL.so.1", "libX11.so.6", "libm.so.6", "libc.so.6"})
	want := []string{"glibc", "libglvnd", "libx11"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("archPackages(tray) = %q, %v; want %q", got, err, want)
	}
	if got, err := archPackages([]string{"libc.so.6"}); err != nil || !reflect.DeepEqual(got, []string{"glibc"}) {
		t.Errorf("archPackages(cli) = %q, %v", got, err)
	}
	if _, err := archPackages([]string{"libc.so.6", "libwayland-client.so.0"}); err == nil || !strings.Contains(err.Error(), "libwayland-client.so.0") {
		t.Errorf("an unknown library: %v, want an error naming it", err)
	}
	if _, err := archPackages(nil); err == nil {
		t.Error("a static binary: no error")
	}
}

func TestArchVersion(t *testing.T) {
	for in, want := range map[string]string{
		"1.0.0":                     "1.0.0",
		"1.0.0~rc1":                 "1.0.0rc1",
		"0.0.0~git20251121.abc1234": "0.0.0git20251121.abc1234",
		"1.0.0+1.gabc1234.dirty":    "1.0.0.1.gabc1234.dirty",
	} {
		if got := archVersion(in); got != want {
			t.Errorf("archVersion(%q) = %q, want %q", in, got, want)
		}
	}
}
