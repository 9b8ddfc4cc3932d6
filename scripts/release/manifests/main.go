// Command manifests writes the package-manager manifests of a Windows
// release from the files just built, so what winget and Scoop download is
// checked against the SHA256 of exactly those files:
//
//   - OUT/winget/manifests/g/GPUCanary/GPUCanary/VERSION/: the multi-file
//     manifest (version, installer, default locale) in the layout of the
//     winget-pkgs repository, schema 1.10.0; a pull request there adds the
//     folder as it is;
//   - OUT/scoop/gpucanary.json: a Scoop app manifest for the zip, for a
//     bucket.
//
// Each file is downloaded from RELEASE_URL/NAME, NAME being the file's
// name in OUT. The winget manifest offers the zip as a portable install
// (the console exe on PATH as `gpucanary`) and, when -msi is given, the
// MSI as the per-user installer.
//
//	manifests -version 1.0.0 -release-url https://…/releases/download/v1.0.0 \
//	          -zip dist/gpucanary-1.0.0-windows-amd64.zip [-msi dist/….msi] -o dist
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

const (
	packageID     = "GPUCanary.GPUCanary"
	wingetSchema  = "1.10.0"
	homepage      = "https://github.com/gpucanary/gpucanary"
	publisher     = "GPU Canary"
	shortDesc     = "Keeps PyTorch GPU environments honest: notices a CPU torch, a job on the CPU, a torch the driver cannot run."
	licenseURL    = homepage + "/blob/main/LICENSE"
	docsURL       = homepage + "/blob/main/docs/windows.md"
	consoleAlias  = "gpucanary"
	trayShortcut  = "GPU Canary"
	scoopManifest = "gpucanary.json"
)

type options struct {
	version, releaseURL, zip, msi, out string
	productCode                        string // the MSI's, which winget matches to the installed app
}

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "the release's version (scripts/version.sh)")
	flag.StringVar(&o.releaseURL, "release-url", "", "where the release's files are downloaded from: URL/NAME for each")
	flag.StringVar(&o.zip, "zip", "", "the Windows zip (scripts/dist-windows.sh)")
	flag.StringVar(&o.msi, "msi", "", "the MSI, when one was built")
	flag.StringVar(&o.productCode, "msi-product-code", "", "the MSI's ProductCode ({GUID}; scripts/dist-windows.sh reads it with msiinfo)")
	flag.StringVar(&o.out, "o", "dist", "output folder")
	flag.Parse()
	if o.version == "" || o.releaseURL == "" || o.zip == "" {
		fmt.Fprintln(os.Stderr, "usage: manifests -version V -release-url URL -zip ZIP [-msi MSI] [-o DIR]")
		os.Exit(2)
	}
	paths, err := write(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "manifests:", err)
		os.Exit(1)
	}
	for _, p := range paths {
		fmt.Println(p)
	}
}

// write writes every manifest and returns their paths.
func write(o options) ([]string, error) {
	zipSum, err := sha256File(o.zip)
	if err != nil {
		return nil, err
	}
	var msiSum string
	if o.msi != "" {
		if msiSum, err = sha256File(o.msi); err != nil {
			return nil, err
		}
	}
	version := packageVersion(o.version)
	base := strings.TrimRight(o.releaseURL, "/")
	zipURL := base + "/" + filepath.Base(o.zip)
	// The zip holds one folder named as the zip is, without .zip.
	folder := strings.TrimSuffix(filepath.Base(o.zip), ".zip")

	dir := filepath.Join(o.out, "winget", "manifests", strings.ToLower(packageID[:1]),
		strings.ReplaceAll(packageID, ".", string(filepath.Separator)), version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	manifests := []struct {
		name, kind string
		m          any
	}{
		{packageID + ".yaml", "version", versionManifest(version)},
		{packageID + ".installer.yaml", "installer", installerManifest(version, zipURL, zipSum, folder, base, o.msi, msiSum, o.productCode)},
		{packageID + ".locale.en-US.yaml", "defaultLocale", localeManifest(version)},
	}
	var paths []string
	for _, f := range manifests {
		data, err := wingetYAML(f.kind, f.m)
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", f.name, err)
		}
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}

	scoopDir := filepath.Join(o.out, "scoop")
	if err := os.MkdirAll(scoopDir, 0o755); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(scoopApp(version, zipURL, zipSum, folder), "", "    ")
	if err != nil {
		return nil, err
	}
	p := filepath.Join(scoopDir, scoopManifest)
	if err := os.WriteFile(p, append(data, '\n'), 0o644); err != nil {
		return nil, err
	}
	return append(paths, p), nil
}

// packageVersion is the version the manifests carry: scripts/version.sh's
// pre-release tilde (1.0.0~rc1, for dpkg and rpm) becomes the hyphen
// Scoop's schema allows and both Scoop and winget order before the
// release (1.0.0-rc1). The files keep their names.
func packageVersion(v string) string {
	return strings.ReplaceAll(v, "~", "-")
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("reading the release file: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// The winget manifests, field by field in the order winget-pkgs keeps
// them (yaml writes a struct's fields in order).

type versionM struct {
	PackageIdentifier string `yaml:"PackageIdentifier"`
	PackageVersion    string `yaml:"PackageVersion"`
	DefaultLocale     string `yaml:"DefaultLocale"`
	ManifestType      string `yaml:"ManifestType"`
	ManifestVersion   string `yaml:"ManifestVersion"`
}

func versionManifest(version string) versionM {
	return versionM{packageID, version, "en-US", "version", wingetSchema}
}

type nestedFile struct {
	RelativeFilePath     string `yaml:"RelativeFilePath"`
	PortableCommandAlias string `yaml:"PortableCommandAlias,omitempty"`
}

type installer struct {
	Architecture         string       `yaml:"Architecture"`
	InstallerType        string       `yaml:"InstallerType"`
	NestedInstallerType  string       `yaml:"NestedInstallerType,omitempty"`
	NestedInstallerFiles []nestedFile `yaml:"NestedInstallerFiles,omitempty"`
	Scope                string       `yaml:"Scope,omitempty"`
	InstallerSwitches    *switches    `yaml:"InstallerSwitches,omitempty"`
	ElevationRequirement string       `yaml:"ElevationRequirement,omitempty"`
	InstallerURL         string       `yaml:"InstallerUrl"`
	InstallerSha256      string       `yaml:"InstallerSha256"`
	UpgradeBehavior      string       `yaml:"UpgradeBehavior,omitempty"`
	ProductCode          string       `yaml:"ProductCode,omitempty"`
}

// switches are what winget adds to the installer's command line.
type switches struct {
	Custom string `yaml:"Custom,omitempty"`
}

type installerM struct {
	PackageIdentifier string      `yaml:"PackageIdentifier"`
	PackageVersion    string      `yaml:"PackageVersion"`
	MinimumOSVersion  string      `yaml:"MinimumOSVersion"`
	Installers        []installer `yaml:"Installers"`
	ManifestType      string      `yaml:"ManifestType"`
	ManifestVersion   string      `yaml:"ManifestVersion"`
}

func installerManifest(version, zipURL, zipSum, folder, base, msi, msiSum, productCode string) installerM {
	m := installerM{
		PackageIdentifier: packageID,
		PackageVersion:    version,
		MinimumOSVersion:  "10.0.17763.0", // Windows 10 1809: toasts with an AppUserModelID
		ManifestType:      "installer",
		ManifestVersion:   wingetSchema,
	}
	// winget prefers the first installer that fits; the MSI, when there
	// is one, gives the Start-menu entry and an "Apps" entry. The same
	// MSI is listed twice: per user (the default, no administrator), and
	// for `winget install --scope machine` per machine, with ALLUSERS=1
	// and elevated (docs/windows.md).
	if msi != "" {
		for _, scope := range []string{"user", "machine"} {
			in := installer{
				Architecture:    "x64",
				InstallerType:   "wix",
				Scope:           scope,
				InstallerURL:    base + "/" + filepath.Base(msi),
				InstallerSha256: strings.ToUpper(msiSum),
				UpgradeBehavior: "install",
				ProductCode:     productCode,
			}
			if scope == "machine" {
				in.InstallerSwitches = &switches{Custom: "ALLUSERS=1"}
				in.ElevationRequirement = "elevationRequired"
			}
			m.Installers = append(m.Installers, in)
		}
	}
	m.Installers = append(m.Installers, installer{
		Architecture:        "x64",
		InstallerType:       "zip",
		NestedInstallerType: "portable",
		NestedInstallerFiles: []nestedFile{
			{RelativeFilePath: folder + `\gpucanary.exe`, PortableCommandAlias: consoleAlias},
		},
		InstallerURL:    zipURL,
		InstallerSha256: strings.ToUpper(zipSum),
	})
	return m
}

type localeM struct {
	PackageIdentifier string   `yaml:"PackageIdentifier"`
	PackageVersion    string   `yaml:"PackageVersion"`
	PackageLocale     string   `yaml:"PackageLocale"`
	Publisher         string   `yaml:"Publisher"`
	PublisherURL      string   `yaml:"PublisherUrl"`
	PackageName       string   `yaml:"PackageName"`
	PackageURL        string   `yaml:"PackageUrl"`
	License           string   `yaml:"License"`
	LicenseURL        string   `yaml:"LicenseUrl"`
	ShortDescription  string   `yaml:"ShortDescription"`
	Moniker           string   `yaml:"Moniker"`
	Tags              []string `yaml:"Tags"`
	ManifestType      string   `yaml:"ManifestType"`
	ManifestVersion   string   `yaml:"ManifestVersion"`
}

func localeManifest(version string) localeM {
	return localeM{
		PackageIdentifier: packageID,
		PackageVersion:    version,
		PackageLocale:     "en-US",
		Publisher:         publisher,
		PublisherURL:      homepage,
		PackageName:       "GPU Canary",
		PackageURL:        homepage,
		License:           "Apache-2.0",
		LicenseURL:        licenseURL,
		ShortDescription:  shortDesc,
		Moniker:           "gpucanary",
		Tags:              []string{"cuda", "gpu", "nvidia", "pytorch", "tray"},
		ManifestType:      "defaultLocale",
		ManifestVersion:   wingetSchema,
	}
}

// wingetYAML is m as YAML with the schema comment winget-pkgs' files
// start with, which editors use to check them.
func wingetYAML(kind string, m any) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# yaml-language-server: $schema=https://aka.ms/winget-manifest.%s.%s.schema.json\n\n", strings.ToLower(kind), wingetSchema)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// scoopM is a Scoop app manifest; Scoop puts bin on PATH and makes the
// shortcuts in its Start-menu folder.
type scoopM struct {
	Version     string     `json:"version"`
	Description string     `json:"description"`
	Homepage    string     `json:"homepage"`
	License     string     `json:"license"`
	URL         string     `json:"url"`
	Hash        string     `json:"hash"`
	ExtractDir  string     `json:"extract_dir"`
	Bin         string     `json:"bin"`
	Shortcuts   [][]string `json:"shortcuts"`
	Notes       string     `json:"notes"`
}

func scoopApp(version, zipURL, zipSum, folder string) scoopM {
	return scoopM{
		Version:     version,
		Description: shortDesc,
		Homepage:    homepage,
		License:     "Apache-2.0",
		URL:         zipURL,
		Hash:        zipSum,
		ExtractDir:  folder,
		Bin:         "gpucanary.exe",
		Shortcuts:   [][]string{{"gpucanaryw.exe", trayShortcut}},
		Notes:       "Settings are kept in %AppData%\\gpucanary and are left there by scoop uninstall. See " + docsURL,
	}
}
