// Command licenses gathers the licence texts of everything linked into a
// GPU Canary binary, for the release archives and the Debian packages.
//
// It runs go-licenses (github.com/google/go-licenses, pinned as a tool in
// this module) to save each linked module's licence and to name it, then
// adds what that tool does not look for: further licence files in the
// folders of the linked packages and in their sub-folders that hold no Go
// package (fonts and icons a package embeds, C sources it compiles with
// cgo), and the Go toolchain's own licence (the standard library and the
// runtime are linked too). Nothing here is a hand-kept list.
//
//	go -C scripts/release build -o bin/tools/ github.com/google/go-licenses ./licenses
//	bin/tools/licenses -go-licenses bin/tools/go-licenses -tags nogui -o OUT ./cmd/gpucanary
//
// OUT gets one folder per library with its licence files, and
// licenses.tsv: library, version, licence name, one a line.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
)

// ownModule is GPU Canary itself, under LICENSE at the repository root.
const ownModule = "github.com/gpucanary/gpucanary"

// licenceName matches the file names go-licenses takes for licences.
var licenceName = regexp.MustCompile(`^(?i)((UN)?LICEN(S|C)E|COPYING|NOTICE).*$`)

// reportTemplate is go-licenses' report, one library a line.
const reportTemplate = "{{range .}}{{.Name}}\t{{.Version}}\t{{.LicenseName}}\n{{end}}"

// Library is one line of licenses.tsv.
type Library struct{ Name, Version, Licence string }

func main() {
	out := flag.String("o", "", "folder to write (replaced)")
	tags := flag.String("tags", "", "build tags of the binary")
	tool := flag.String("go-licenses", "go-licenses", "the go-licenses program")
	flag.Parse()
	if *out == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: licenses -o OUT [-tags TAGS] [-go-licenses PATH] PACKAGE")
		os.Exit(2)
	}
	if err := run(*out, *tags, *tool, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "licenses:", err)
		os.Exit(1)
	}
}

func run(out, tags, tool, pkg string) error {
	if err := os.RemoveAll(out); err != nil {
		return fmt.Errorf("clearing %s: %w", out, err)
	}
	env := os.Environ()
	if tags != "" {
		env = append(env, "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -tags="+tags))
	}
	save := exec.Command(tool, "save", pkg, "--save_path="+out, "--ignore="+ownModule)
	// go-licenses lists every non-Go file it cannot follow (cgo's C, the
	// assembly), which is what the nearby-licence search below covers.
	var saveErr bytes.Buffer
	save.Env, save.Stderr = env, &saveErr
	if err := save.Run(); err != nil {
		return fmt.Errorf("go-licenses save %s: %w\n%s", pkg, err, saveErr.Bytes())
	}
	tpl := filepath.Join(out, ".report.tpl")
	if err := os.WriteFile(tpl, []byte(reportTemplate), 0o644); err != nil {
		return err
	}
	report := exec.Command(tool, "report", pkg, "--ignore="+ownModule, "--template="+tpl)
	// go-licenses looks up each licence's web address and logs every
	// failed look-up; the names it prints come from the files.
	var stderr bytes.Buffer
	report.Env, report.Stderr = env, &stderr
	text, err := report.Output()
	os.Remove(tpl)
	if err != nil {
		return fmt.Errorf("go-licenses report %s: %w\n%s", pkg, err, stderr.Bytes())
	}
	libs, err := parseReport(text)
	if err != nil {
		return err
	}
	pkgs, err := listPackages(pkg, tags)
	if err != nil {
		return err
	}
	for _, p := range pkgs {
		if err := copyNearbyLicences(out, p); err != nil {
			return err
		}
	}
	goLib, err := copyGoLicence(out)
	if err != nil {
		return err
	}
	libs = append(libs, goLib)
	sort.Slice(libs, func(i, j int) bool { return libs[i].Name < libs[j].Name })
	return writeIndex(filepath.Join(out, "licenses.tsv"), libs)
}

// parseReport reads go-licenses' report; a library whose licence it could
// not name is an error, since the archive could not say what covers it.
func parseReport(text []byte) ([]Library, error) {
	var libs []Library
	var unknown []string
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("reading go-licenses' report: line %q: want 3 tab-separated fields", line)
		}
		if f[2] == "" || f[2] == "Unknown" {
			unknown = append(unknown, f[0])
		}
		libs = append(libs, Library{Name: f[0], Version: f[1], Licence: f[2]})
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("go-licenses names no licence for %s", strings.Join(unknown, ", "))
	}
	if len(libs) == 0 {
		return nil, errors.New("go-licenses reported no library")
	}
	return libs, nil
}

// goPackage is what listPackages reads of `go list -json`.
type goPackage struct {
	ImportPath string
	Dir        string
	Standard   bool
	Module     *struct{ Path string }
}

// listPackages lists the packages linked into pkg, less the standard
// library and GPU Canary's own.
func listPackages(pkg, tags string) ([]goPackage, error) {
	args := []string{"list", "-deps", "-json=ImportPath,Dir,Standard,Module"}
	if tags != "" {
		args = append(args, "-tags="+tags)
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Stderr = os.Stderr
	text, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps %s: %w", pkg, err)
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(text))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("reading go list's output: %w", err)
		}
		if p.Standard || p.Module == nil || p.Module.Path == ownModule || p.Dir == "" {
			continue
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// copyNearbyLicences copies the licence files in p's folder and in its
// sub-folders that hold no Go package into out/<import path>/, unless
// go-licenses saved the same text for the library already.
func copyNearbyLicences(out string, p goPackage) error {
	found, err := nearbyLicences(p.Dir)
	if err != nil {
		return err
	}
	for _, rel := range found {
		src := filepath.Join(p.Dir, rel)
		data, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("reading %s: %w", src, err)
		}
		if saved, err := savedFor(out, p.ImportPath, data); err != nil {
			return err
		} else if saved {
			continue
		}
		dst := filepath.Join(out, filepath.FromSlash(p.ImportPath), rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", dst, err)
		}
	}
	return nil
}

// nearbyLicences lists, relative to dir, the licence files in dir and in
// the sub-folders of dir that hold no .go file (a sub-folder with Go files
// is another package, listed on its own if it is linked).
func nearbyLicences(dir string) ([]string, error) {
	var found []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == dir {
				return nil
			}
			name := d.Name()
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if hasGoFiles(path) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && licenceName.MatchString(d.Name()) {
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			found = append(found, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("looking for licence files in %s: %w", dir, err)
	}
	return found, nil
}

func hasGoFiles(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	return len(m) > 0
}

// savedFor reports whether a file with exactly data is already saved in
// out for importPath or a library above it (go-licenses names a library by
// the folder its licence is in, which may be a parent of the package).
func savedFor(out, importPath string, data []byte) (bool, error) {
	want := sha256.Sum256(data)
	for p := importPath; p != "." && p != "/" && p != ""; p = filepath.Dir(p) {
		dir := filepath.Join(out, filepath.FromSlash(p))
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return false, err
		}
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			got, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				return false, err
			}
			if sha256.Sum256(got) == want {
				return true, nil
			}
		}
	}
	return false, nil
}

// copyGoLicence copies the licence of the Go toolchain that builds the
// binary: its standard library and runtime are linked into it.
func copyGoLicence(out string) (Library, error) {
	root, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return Library{}, fmt.Errorf("go env GOROOT: %w", err)
	}
	version, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return Library{}, fmt.Errorf("go env GOVERSION: %w", err)
	}
	src := filepath.Join(strings.TrimSpace(string(root)), "LICENSE")
	data, err := os.ReadFile(src)
	if err != nil {
		return Library{}, fmt.Errorf("reading the Go licence: %w", err)
	}
	dst := filepath.Join(out, "go", "LICENSE")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return Library{}, err
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		return Library{}, err
	}
	// Go is under the 3-clause BSD licence (go.dev/LICENSE); go-licenses
	// does not report the standard library.
	return Library{Name: "go", Version: strings.TrimSpace(string(version)), Licence: "BSD-3-Clause"}, nil
}

func writeIndex(path string, libs []Library) error {
	var b strings.Builder
	b.WriteString("# library\tversion\tlicence (gathered by scripts/release/licenses with go-licenses, " + runtime.Version() + ")\n")
	for _, l := range libs {
		fmt.Fprintf(&b, "%s\t%s\t%s\n", l.Name, l.Version, l.Licence)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
