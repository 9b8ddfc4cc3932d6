package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// schema compiles one of the published schemas in testdata/schemas
// (SOURCE.md there says where each comes from).
func schema(t *testing.T, file string) *jsonschema.Schema {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", "schemas", file))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("reading %s: %v", file, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(path, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(path)
	if err != nil {
		t.Fatalf("compiling %s: %v", file, err)
	}
	return s
}

// instance reads a manifest as the schema library wants it: YAML through
// JSON, so numbers and maps are JSON's.
func instance(t *testing.T, path string) any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".yaml") {
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s is not YAML: %v", path, err)
		}
		if data, err = json.Marshal(v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

func sum(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// release makes a dist folder with a zip and an MSI (their bytes differ,
// so a swapped hash shows) and writes the manifests for it.
func release(t *testing.T, version string, withMSI bool) (options, []string) {
	t.Helper()
	out := t.TempDir()
	o := options{version: version, releaseURL: "https://example.com/releases/download/v1.2.3/", out: out,
		zip: filepath.Join(out, "gpucanary-"+version+"-windows-amd64.zip")}
	if err := os.WriteFile(o.zip, []byte("PK zip bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	if withMSI {
		o.productCode = "{3856188C-1BDA-472E-8143-2421307BA69B}"
		o.msi = filepath.Join(out, "gpucanary-"+version+"-x64.msi")
		if err := os.WriteFile(o.msi, []byte("MSI bytes"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	paths, err := write(o)
	if err != nil {
		t.Fatal(err)
	}
	return o, paths
}

func TestManifestsValidate(t *testing.T) {
	schemas := map[string]*jsonschema.Schema{
		".yaml":              schema(t, "manifest.version."+wingetSchema+".json"),
		".installer.yaml":    schema(t, "manifest.installer."+wingetSchema+".json"),
		".locale.en-US.yaml": schema(t, "manifest.defaultLocale."+wingetSchema+".json"),
	}
	scoop := schema(t, "scoop.schema.json")
	for _, tt := range []struct {
		version string
		msi     bool
	}{{"1.2.3", true}, {"1.2.3", false}, {"1.0.0~rc1", false}, {"0.0.0~git20261129.f3c6aea.dirty", true}} {
		_, paths := release(t, tt.version, tt.msi)
		if len(paths) != 4 {
			t.Fatalf("%s: wrote %q, want three winget files and one Scoop file", tt.version, paths)
		}
		for _, p := range paths {
			var s *jsonschema.Schema
			if strings.HasSuffix(p, ".json") {
				s = scoop
			} else {
				s = schemas[strings.TrimPrefix(filepath.Base(p), packageID)]
			}
			if s == nil {
				t.Fatalf("no schema for %s", p)
			}
			if err := s.Validate(instance(t, p)); err != nil {
				t.Errorf("%s (version %s, MSI %v) does not validate: %v", filepath.Base(p), tt.version, tt.msi, err)
			}
		}
	}
}

// A manifest that breaks the schema fails: the check is not vacuous.
func TestSchemaRejects(t *testing.T) {
	_, paths := release(t, "1.2.3", false)
	m := instance(t, paths[1]).(map[string]any)
	m["Installers"].([]any)[0].(map[string]any)["InstallerSha256"] = "not-a-hash"
	if err := schema(t, "manifest.installer."+wingetSchema+".json").Validate(m); err == nil {
		t.Error("an installer manifest with a bad SHA256 validates")
	}
	s := instance(t, paths[3]).(map[string]any)
	delete(s, "version")
	if err := schema(t, "scoop.schema.json").Validate(s); err == nil {
		t.Error("a Scoop manifest without a version validates")
	}
}

func TestManifestsNameTheFiles(t *testing.T) {
	o, paths := release(t, "1.2.3", true)
	wantDir := filepath.Join(o.out, "winget", "manifests", "g", "GPUCanary", "GPUCanary", "1.2.3")
	if v := packageVersion("1.0.0~rc1"); v != "1.0.0-rc1" {
		t.Errorf("packageVersion(1.0.0~rc1) = %q", v)
	}
	for _, p := range paths[:3] {
		if filepath.Dir(p) != wantDir {
			t.Errorf("%s is not in %s, where winget-pkgs keeps it", p, wantDir)
		}
	}
	var inst installerM
	data, _ := os.ReadFile(paths[1])
	if err := yaml.Unmarshal(data, &inst); err != nil {
		t.Fatal(err)
	}
	if len(inst.Installers) != 3 {
		t.Fatalf("installers: %+v, want the MSI per user, the MSI per machine and the zip", inst.Installers)
	}
	msi, machine, zip := inst.Installers[0], inst.Installers[1], inst.Installers[2]
	if msi.InstallerURL != "https://example.com/releases/download/v1.2.3/gpucanary-1.2.3-x64.msi" ||
		!strings.EqualFold(msi.InstallerSha256, sum(t, o.msi)) || msi.Scope != "user" || msi.ProductCode != o.productCode ||
		msi.InstallerSwitches != nil || msi.ElevationRequirement != "" {
		t.Errorf("the MSI installer: %+v; its file's SHA256 is %s", msi, sum(t, o.msi))
	}
	if machine.InstallerURL != msi.InstallerURL || machine.InstallerSha256 != msi.InstallerSha256 || machine.Scope != "machine" ||
		machine.ProductCode != o.productCode || machine.InstallerSwitches == nil || machine.InstallerSwitches.Custom != "ALLUSERS=1" ||
		machine.ElevationRequirement != "elevationRequired" {
		t.Errorf("the per-machine MSI installer: %+v", machine)
	}
	if zip.InstallerURL != "https://example.com/releases/download/v1.2.3/gpucanary-1.2.3-windows-amd64.zip" ||
		!strings.EqualFold(zip.InstallerSha256, sum(t, o.zip)) ||
		zip.NestedInstallerFiles[0].RelativeFilePath != `gpucanary-1.2.3-windows-amd64\gpucanary.exe` {
		t.Errorf("the zip installer: %+v; its file's SHA256 is %s", zip, sum(t, o.zip))
	}
	var scoop scoopM
	data, _ = os.ReadFile(paths[3])
	if err := json.Unmarshal(data, &scoop); err != nil {
		t.Fatal(err)
	}
	if scoop.URL != zip.InstallerURL || scoop.Hash != sum(t, o.zip) || scoop.ExtractDir != "gpucanary-1.2.3-windows-amd64" {
		t.Errorf("the Scoop manifest: %+v; the zip's SHA256 is %s", scoop, sum(t, o.zip))
	}
	// The same files give the same manifests, byte for byte, written
	// into another folder.
	first := map[string]string{}
	for _, p := range paths {
		data, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(o.out, p)
		first[rel] = string(data)
	}
	o2 := o
	o2.out = t.TempDir()
	again, err := write(o2)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range again {
		data, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(o2.out, p)
		if first[rel] != string(data) {
			t.Errorf("%s differs when written again:\n%s\n---\n%s", rel, first[rel], data)
		}
	}
}
