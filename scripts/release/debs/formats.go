package main

import (
	"debug/elf"
	"fmt"
	"os/exec"
	"sort"
	"strings"
)

// elfdeps is rpm's ELF dependency generator, the program rpmbuild runs on
// every ELF file it packages (Debian's and Fedora's rpm both ship it
// there).
const elfdeps = "/usr/lib/rpm/elfdeps"

// rpmRequires returns what rpmbuild would make the RPM of binary require:
// elfdeps's reading of its libraries (libc.so.6()(64bit)) and the symbol
// versions it uses (libc.so.6(GLIBC_2.34)(64bit)), sorted so the same
// binary gives the same package.
func rpmRequires(binary string) ([]string, error) {
	cmd := exec.Command(elfdeps, "--requires", binary)
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		return nil, fmt.Errorf("running %s --requires %s (install rpm): %w\n%s", elfdeps, binary, err, msg)
	}
	return parseRequires(string(out))
}

// parseRequires reads elfdeps's lines, one dependency each, dropping
// duplicates and sorting them.
func parseRequires(out string) ([]string, error) {
	seen := map[string]bool{}
	var reqs []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || seen[line] {
			continue
		}
		seen[line] = true
		reqs = append(reqs, line)
	}
	if len(reqs) == 0 {
		return nil, fmt.Errorf("elfdeps printed no requirement: %q", out)
	}
	sort.Strings(reqs)
	return reqs, nil
}

// archLibraries names the Arch Linux package that ships each library a
// GPU Canary binary may link. Arch packages do not require sonames the
// way RPMs do; each package names the packages it needs. A library not
// here fails the build rather than go unnamed.
var archLibraries = map[string]string{
	"libc.so.6":            "glibc",
	"libm.so.6":            "glibc",
	"libpthread.so.0":      "glibc",
	"libdl.so.2":           "glibc",
	"libresolv.so.2":       "glibc",
	"ld-linux-x86-64.so.2": "glibc",
	"libGL.so.1":           "libglvnd",
	"libX11.so.6":          "libx11",
	"libXcursor.so.1":      "libxcursor",
	"libXrandr.so.2":       "libxrandr",
	"libXinerama.so.1":     "libxinerama",
	"libXi.so.6":           "libxi",
	"libXxf86vm.so.1":      "libxxf86vm",
	"libXext.so.6":         "libxext",
}

// archDepends returns the Arch packages that ship the libraries binary
// names (its DT_NEEDED entries), sorted and each once.
func archDepends(binary string) ([]string, error) {
	f, err := elf.Open(binary)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", binary, err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		return nil, fmt.Errorf("reading the libraries %s needs: %w", binary, err)
	}
	return archPackages(libs)
}

func archPackages(libs []string) ([]string, error) {
	seen := map[string]bool{}
	var pkgs []string
	for _, lib := range libs {
		pkg, ok := archLibraries[lib]
		if !ok {
			return nil, fmt.Errorf("no Arch package is known to ship %s: add it to archLibraries", lib)
		}
		if !seen[pkg] {
			seen[pkg] = true
			pkgs = append(pkgs, pkg)
		}
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("the binary names no library (a static build is not what is packaged)")
	}
	sort.Strings(pkgs)
	return pkgs, nil
}

// archVersion turns a version from scripts/version.sh into one pacman
// orders the same way. pacman's vercmp has no tilde, but it orders a
// letter run after the last number before that number's release
// (1.0.0rc1 < 1.0.0), so a pre-release drops its tilde; and a package
// version holds no plus, so a build after a tag joins with a dot
// (1.0.0.1.gabc1234 > 1.0.0).
func archVersion(v string) string {
	return strings.NewReplacer("~", "", "+", ".").Replace(v)
}
