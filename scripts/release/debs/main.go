// Command debs builds GPU Canary's two Linux packages with nfpm
// (github.com/goreleaser/nfpm/v2, used as a library), as .deb and, with
// -formats, as RPM and Arch Linux packages from the same description:
//
//   - gpucanary-cli: the command line without GUI code, for servers and
//     containers, with the systemd user unit for `watch`;
//   - gpucanary: the tray app with its menu entry and icons; it depends on
//     gpucanary-cli of the same version, so installing it gives the whole
//     set (tray, command line, unit) without a file shipped twice.
//
// Each package's dependencies are derived from its binary, never guessed:
// the .deb's Depends by dpkg-shlibdeps (dpkg-dev), which reads the
// libraries the ELF file names and asks dpkg which packages provide them
// and from which version; the RPM's Requires by rpm's own ELF dependency
// generator (/usr/lib/rpm/elfdeps, as rpmbuild runs it), in the sonames
// and symbol versions that dnf and zypper resolve; the Arch package's
// depends by mapping each library the binary names to the Arch package
// that ships it (archLibraries), failing on a library the map lacks.
// The .deb's copyright file holds GPU Canary's licence and the texts
// gathered by ../licenses for its binary; the RPM and Arch packages carry
// LICENSE and the same texts whole in /usr/share/licenses/PKG.
//
//	debs -version 0.1.0 -gui bin/gpucanary -cli bin/gpucanary-cli \
//	     -gui-licenses L1 -cli-licenses L2 -o dist
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/arch" // registers the archlinux packager
	_ "github.com/goreleaser/nfpm/v2/deb"  // registers the deb packager
	"github.com/goreleaser/nfpm/v2/files"
	_ "github.com/goreleaser/nfpm/v2/rpm" // registers the rpm packager
)

const (
	homepage = "https://github.com/gpucanary/gpucanary"
	appID    = "io.github.gpucanary"
)

// options are the command line.
type options struct {
	version, arch, maintainer, commit, date string
	gui, cli                                string // the binaries
	guiLicences, cliLicences                string // folders written by ../licenses
	root                                    string // the repository
	out                                     string
	compression, release                    string
	formats                                 string
}

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "Debian version (scripts/version.sh)")
	flag.StringVar(&o.arch, "arch", "amd64", "Debian architecture")
	flag.StringVar(&o.maintainer, "maintainer", "GPU Canary developers <gpucanary@users.noreply.github.com>", "Maintainer field")
	flag.StringVar(&o.commit, "commit", "", "the commit the binaries were built from (for the changelog)")
	flag.StringVar(&o.date, "date", "", "build date, RFC 3339 (default: SOURCE_DATE_EPOCH, else now)")
	flag.StringVar(&o.gui, "gui", "bin/gpucanary", "the tray binary")
	flag.StringVar(&o.cli, "cli", "bin/gpucanary-cli", "the command-line binary, every command without GUI code (built with -tags nogui)")
	flag.StringVar(&o.guiLicences, "gui-licenses", "", "third-party licences of the tray binary")
	flag.StringVar(&o.cliLicences, "cli-licenses", "", "third-party licences of the command-line binary")
	flag.StringVar(&o.root, "root", ".", "the repository (LICENSE, packaging/linux)")
	flag.StringVar(&o.out, "o", "dist", "output folder")
	// gzip: every dpkg reads it, and it packs the tray binary in seconds
	// where xz takes minutes on a small machine for a fifth less.
	// A Debian revision makes the package non-native, which it is: the
	// packaging is not the upstream release (and lintian then expects the
	// changelog.Debian.gz that nfpm writes).
	flag.StringVar(&o.release, "release", "1", "Debian revision")
	flag.StringVar(&o.compression, "compression", "gzip", "gzip, xz or zstd (the .deb's and the RPM's)")
	flag.StringVar(&o.formats, "formats", "deb", "the package formats, comma-separated: deb, rpm, archlinux")
	flag.Parse()
	if o.version == "" || o.guiLicences == "" || o.cliLicences == "" {
		fmt.Fprintln(os.Stderr, "usage: debs -version V -gui-licenses DIR -cli-licenses DIR [-gui BIN] [-cli BIN] [-o DIR]")
		os.Exit(2)
	}
	paths, err := build(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "debs:", err)
		os.Exit(1)
	}
	for _, p := range paths {
		fmt.Println(p)
	}
}

// build writes both packages and returns their paths.
func build(o options) ([]string, error) {
	when, err := buildTime(o.date)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "gpucanary-debs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return nil, err
	}
	licence := filepath.Join(o.root, "LICENSE")
	own, err := os.ReadFile(licence)
	if err != nil {
		return nil, fmt.Errorf("reading GPU Canary's licence: %w", err)
	}
	if !strings.Contains(string(own), "Apache License") {
		return nil, fmt.Errorf("%s/LICENSE is not the Apache License", o.root)
	}

	var built []string
	for _, format := range strings.Split(o.formats, ",") {
		for _, p := range []pkgSpec{cliPackage(o), guiPackage(o)} {
			info, err := p.formatInfo(format, o, tmp, when, licence)
			if err != nil {
				return nil, fmt.Errorf("describing the %s package %s: %w", format, p.name, err)
			}
			path, err := writePackage(format, info, o.out)
			if err != nil {
				return nil, fmt.Errorf("building the %s package %s: %w", format, p.name, err)
			}
			built = append(built, path)
		}
	}
	return built, nil
}

// formatInfo is p's description for one format: its dependencies, its
// licence files and, for Arch, a version pacman orders right.
func (p pkgSpec) formatInfo(format string, o options, tmp string, when time.Time, licence string) (*nfpm.Info, error) {
	bin := "/usr/bin/" + filepath.Base(p.binary)
	dir := filepath.Join(tmp, format, p.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var depends []string
	var licences files.Contents
	switch format {
	case "deb":
		deps, err := shlibDepends(filepath.Join(dir, "shlibs"), p.name, p.binary)
		if err != nil {
			return nil, err
		}
		depends = deps
		if p.gui {
			depends = append(depends, "gpucanary-cli (= "+o.version+"-"+o.release+")")
		}
		copyright, err := copyrightFile(p.name, bin, p.licences)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, "copyright")
		if err := os.WriteFile(path, []byte(copyright), 0o644); err != nil {
			return nil, err
		}
		licences = files.Contents{{Source: path, Destination: "/usr/share/doc/" + p.name + "/copyright", FileInfo: &files.ContentFileInfo{Mode: 0o644}}}
	case "rpm", "archlinux":
		if format == "rpm" {
			deps, err := rpmRequires(p.binary)
			if err != nil {
				return nil, err
			}
			depends = deps
			if p.gui {
				depends = append(depends, "gpucanary-cli = "+o.version+"-"+o.release)
			}
		} else {
			deps, err := archDepends(p.binary)
			if err != nil {
				return nil, err
			}
			depends = deps
			if p.gui {
				depends = append(depends, "gpucanary-cli="+archVersion(o.version)+"-"+o.release)
			}
		}
		text, err := thirdPartyFile(p.name, bin, p.licences)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, "THIRD_PARTY_LICENSES")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return nil, err
		}
		// Type licence marks them %license in the RPM (rpm -qL lists
		// them); nfpm leaves files of that type out of other formats.
		kind := ""
		if format == "rpm" {
			kind = files.TypeRPMLicence
		}
		licences = files.Contents{
			{Source: licence, Destination: "/usr/share/licenses/" + p.name + "/LICENSE", Type: kind, FileInfo: &files.ContentFileInfo{Mode: 0o644}},
			{Source: path, Destination: "/usr/share/licenses/" + p.name + "/THIRD_PARTY_LICENSES", Type: kind, FileInfo: &files.ContentFileInfo{Mode: 0o644}},
		}
	default:
		return nil, fmt.Errorf("unknown package format %q (deb, rpm or archlinux)", format)
	}
	info, err := p.info(o, dir, when, depends, licences)
	if err != nil {
		return nil, err
	}
	switch format {
	case "rpm":
		// rpm orders 1.0.0~rc1 before 1.0.0 as dpkg does, so the
		// version is the .deb's. The build host is fixed: rpm records
		// it, and the same commit and date must give the same bytes on
		// any machine.
		// Summary and description are separate fields there, and a
		// paragraph break is an empty line rather than Debian's dot.
		info.RPM = nfpm.RPM{Compression: o.compression, BuildHost: "gpucanary-release", Group: "Applications/System", Summary: p.summary}
		info.Description = strings.ReplaceAll(p.long, "\n.\n", "\n\n")
	case "archlinux":
		// pacman shows pkgdesc on one line: the summary.
		info.Description = "GPU Canary " + p.summary
		info.Version = archVersion(o.version)
		info.ArchLinux = nfpm.ArchLinux{Packager: o.maintainer}
	}
	return info, nil
}

func buildTime(date string) (time.Time, error) {
	if date != "" {
		t, err := time.Parse(time.RFC3339, date)
		if err != nil {
			return time.Time{}, fmt.Errorf("-date %q: %w", date, err)
		}
		return t.UTC(), nil
	}
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		var sec int64
		if _, err := fmt.Sscan(s, &sec); err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", s, err)
		}
		return time.Unix(sec, 0).UTC(), nil
	}
	return time.Now().UTC().Truncate(time.Second), nil
}

// pkgSpec is what differs between the two packages.
type pkgSpec struct {
	name, summary, long string
	binary, licences    string
	gui                 bool // depends on gpucanary-cli of the same version
	recommends          []string
	section             string
	extra               []*files.Content
}

func cliPackage(o options) pkgSpec {
	return pkgSpec{
		name:    "gpucanary-cli",
		summary: "keeps PyTorch GPU environments honest (command line)",
		long: `GPU Canary notices when a CUDA build of torch in a virtualenv is replaced
by a CPU build, when a Python job computes on the CPU although a GPU is
there, and when the installed torch cannot work with the driver or the GPU.
It reads environments from disk, shows which process uses which GPU, and
repairs an environment with the exact reinstall command.
.
This package is the command line (check, ps, watch, fix, report, the
Prometheus agent) without any GUI library, for headless GPU servers and
containers, and a systemd user unit that runs 'gpucanary-cli watch'. It
reads the GPU through the NVIDIA driver's libnvidia-ml.so.1 when the
driver is installed.`,
		binary:   o.cli,
		licences: o.cliLicences,
		section:  "utils",
		extra: []*files.Content{{
			Source:      filepath.Join(o.root, "packaging/linux/gpucanary-watch.service"),
			Destination: "/usr/lib/systemd/user/gpucanary-watch.service",
			FileInfo:    &files.ContentFileInfo{Mode: 0o644},
		}},
	}
}

func guiPackage(o options) pkgSpec {
	p := pkgSpec{
		name:    "gpucanary",
		summary: "keeps PyTorch GPU environments honest (tray app)",
		long: `GPU Canary sits in the system tray and notices at once when a CUDA build
of torch in one of your virtualenvs is replaced by a CPU build, when a
Python job computes on the CPU although a GPU is there, and when the torch
you have cannot work with this driver or this GPU. It shows which process
uses which GPU, and repairs the environment with one click.
.
This package is the tray app with its menu entry and icons; it depends on
gpucanary-cli for the command line and the systemd user unit.`,
		binary:     o.gui,
		licences:   o.guiLicences,
		section:    "utils",
		gui:        true,
		recommends: []string{"xdg-utils"}, // "Open folder" runs xdg-open
		extra: []*files.Content{{
			Source:      filepath.Join(o.root, "packaging/linux", appID+".desktop"),
			Destination: "/usr/share/applications/" + appID + ".desktop",
			FileInfo:    &files.ContentFileInfo{Mode: 0o644},
		}},
	}
	icons, _ := filepath.Glob(filepath.Join(o.root, "packaging/linux/icons/hicolor/*/apps", appID+".png"))
	sort.Strings(icons)
	for _, icon := range icons {
		size := filepath.Base(filepath.Dir(filepath.Dir(icon)))
		p.extra = append(p.extra, &files.Content{
			Source:      icon,
			Destination: "/usr/share/icons/hicolor/" + size + "/apps/" + appID + ".png",
			FileInfo:    &files.ContentFileInfo{Mode: 0o644},
		})
	}
	return p
}

// info is the nfpm description of package p.
func (p pkgSpec) info(o options, dir string, when time.Time, depends []string, licences files.Contents) (*nfpm.Info, error) {
	changelog := filepath.Join(dir, "changelog.yml")
	if err := os.WriteFile(changelog, []byte(changelogYAML(o, when)), 0o644); err != nil {
		return nil, err
	}
	contents := files.Contents{
		{Source: p.binary, Destination: "/usr/bin/" + filepath.Base(p.binary), FileInfo: &files.ContentFileInfo{Mode: 0o755}},
	}
	contents = append(contents, licences...)
	contents = append(contents, p.extra...)
	info := &nfpm.Info{
		Name:          p.name,
		Arch:          o.arch,
		Platform:      "linux",
		Version:       o.version,
		Release:       o.release,
		VersionSchema: "none", // scripts/version.sh makes a Debian version already
		Section:       p.section,
		Priority:      "optional",
		Maintainer:    o.maintainer,
		Description:   p.summary + "\n" + p.long,
		Homepage:      homepage,
		License:       "Apache-2.0",
		Changelog:     changelog,
		MTime:         when,
		Overridables: nfpm.Overridables{
			Depends:    depends,
			Recommends: p.recommends,
			Contents:   contents,
			Umask:      0o022,
			Deb:        nfpm.Deb{Compression: o.compression},
		},
	}
	return nfpm.WithDefaults(info), nil
}

// changelogYAML is the one-entry changelog nfpm turns into
// /usr/share/doc/PKG/changelog.gz (chglog's format).
func changelogYAML(o options, when time.Time) string {
	version := o.version + "-" + o.release
	note := "GPU Canary " + o.version + "."
	commit := o.commit
	if commit != "" {
		note = "Built from commit " + commit + "."
	} else {
		commit = "unknown"
	}
	return fmt.Sprintf(`- semver: %q
  date: %s
  packager: %q
  deb:
    urgency: low
    distributions: [unstable]
  changes:
    - commit: %q
      note: %q
`, version, when.Format(time.RFC3339), o.maintainer, commit, note)
}

func writePackage(format string, info *nfpm.Info, out string) (string, error) {
	packager, err := nfpm.Get(format)
	if err != nil {
		return "", err
	}
	if err := nfpm.Validate(info); err != nil {
		return "", err
	}
	path := filepath.Join(out, packager.ConventionalFileName(info))
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := packager.Package(info, f); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	return path, f.Close()
}

// shlibDepends runs dpkg-shlibdeps on binary and returns the packages it
// names. dpkg-shlibdeps wants a debian/control and the binary inside
// debian/PKG/, so both are made in a scratch folder. Its warnings are off:
// go-nvml leaves every NVML symbol undefined on purpose (it loads
// libnvidia-ml.so.1 with dlopen when a driver is there), and dpkg-shlibdeps
// would print one warning per symbol; errors, such as a library no package
// provides, still fail the build.
func shlibDepends(scratch, pkg, binary string) ([]string, error) {
	bin := filepath.Join(scratch, "debian", pkg, "usr", "bin", filepath.Base(binary))
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", binary, err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(scratch, "debian", "control"), nil, 0o644); err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(scratch, bin)
	cmd := exec.Command("dpkg-shlibdeps", "--warnings=0", "-O", rel)
	cmd.Dir = scratch
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		return nil, fmt.Errorf("dpkg-shlibdeps %s (install dpkg-dev): %w\n%s", binary, err, msg)
	}
	return parseShlibs(string(out))
}

// parseShlibs reads "shlibs:Depends=libc6 (>= 2.34), libgl1" lines.
func parseShlibs(out string) ([]string, error) {
	for _, line := range strings.Split(out, "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "shlibs:Depends=")
		if !ok {
			continue
		}
		var deps []string
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); d != "" {
				deps = append(deps, d)
			}
		}
		return deps, nil
	}
	return nil, fmt.Errorf("dpkg-shlibdeps printed no shlibs:Depends: %q", out)
}
