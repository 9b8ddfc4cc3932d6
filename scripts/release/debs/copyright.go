package main

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// library is one line of licenses.tsv, written by ../licenses.
type library struct{ name, version, licence string }

// copyrightFile is /usr/share/doc/PKG/copyright: GPU Canary's licence by
// reference to Debian's copy of the Apache License, then every library
// linked into binary with its licence, then each licence text gathered for
// it (the files under licences, as ../licenses wrote them).
func copyrightFile(pkg, binary, licences string) (string, error) {
	return notices(pkg, binary, licences, "GPU Canary is copyright the GPU Canary authors and licensed under the\n"+
		"Apache License, Version 2.0. On Debian systems its full text is in\n"+
		"/usr/share/common-licenses/Apache-2.0.\n\n", foldApache2)
}

// thirdPartyFile is the same notice for the RPM and Arch packages, which
// ship GPU Canary's LICENSE beside it in /usr/share/licenses/PKG: those
// systems have no common-licenses folder to point at, so every text is
// kept whole.
func thirdPartyFile(pkg, binary, licences string) (string, error) {
	return notices(pkg, binary, licences, "GPU Canary is copyright the GPU Canary authors and licensed under the\n"+
		"Apache License, Version 2.0, whose text is in LICENSE beside this file.\n\n",
		func(s string) string { return s })
}

// notices writes the header, own (the sentence about GPU Canary's own
// licence), the library table and each text passed through fold.
func notices(pkg, binary, licences, own string, fold func(string) string) (string, error) {
	libs, err := readIndex(filepath.Join(licences, "licenses.tsv"))
	if err != nil {
		return "", err
	}
	texts, err := licenceTexts(licences)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: GPU Canary\nSource: %s\n\n", pkg, homepage)
	b.WriteString(own)
	fmt.Fprintf(&b, "%s also contains these libraries, each under its own licence\n", binary)
	b.WriteString("(gathered from the build by go-licenses; their texts follow):\n\n")
	width := 0
	for _, l := range libs {
		width = max(width, len(l.name))
	}
	for _, l := range libs {
		fmt.Fprintf(&b, "  %-*s  %-12s  %s\n", width, l.name, l.licence, l.version)
	}
	for _, t := range texts {
		fmt.Fprintf(&b, "\n%s\n%s\n%s\n\n", strings.Repeat("-", 72), t.path, strings.Repeat("-", 72))
		b.WriteString(strings.TrimRight(fold(t.text), "\n") + "\n")
	}
	return b.String(), nil
}

// foldApache2 replaces the text of the Apache License 2.0 by a reference
// to Debian's copy, as Debian policy asks (section 12.5), keeping the
// copyright lines the file holds of its own; any other text is returned
// as it is.
func foldApache2(text string) string {
	if !strings.Contains(text, "Apache License") || !strings.Contains(text, "Version 2.0, January 2004") ||
		!strings.Contains(text, "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION") {
		return text
	}
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		if copyrightLine.MatchString(l) && !strings.Contains(l, "[yyyy]") && !strings.Contains(l, "{yyyy}") {
			b.WriteString(l + "\n")
		}
	}
	b.WriteString("Licensed under the Apache License, Version 2.0. On Debian systems its full\n" +
		"text is in /usr/share/common-licenses/Apache-2.0.\n")
	return b.String()
}

// copyrightLine is a line that states a copyright ("Copyright 2020 X",
// "Copyright (c) …", "© …").
var copyrightLine = regexp.MustCompile(`^(?i)(copyright\s+(\(c\)|©|\d{4})|©)`)

func readIndex(path string) ([]library, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the licence index: %w", err)
	}
	defer f.Close()
	var libs []library
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := strings.Split(line, "\t")
		if len(p) != 3 {
			return nil, fmt.Errorf("%s: line %q: want library, version and licence", path, line)
		}
		libs = append(libs, library{p[0], p[1], p[2]})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(libs) == 0 {
		return nil, fmt.Errorf("%s lists no library", path)
	}
	return libs, nil
}

type licenceText struct{ path, text string }

// licenceTexts reads every file under dir but the index, by path.
func licenceTexts(dir string) ([]licenceText, error) {
	var out []licenceText
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "licenses.tsv" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out = append(out, licenceText{filepath.ToSlash(rel), string(data)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the licence texts in %s: %w", dir, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}
