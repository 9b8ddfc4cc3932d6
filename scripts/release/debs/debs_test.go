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
