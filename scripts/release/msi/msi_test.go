// Package msi tests GPU Canary's Windows installer as scripts/dist-msi.sh
// builds it from packaging/windows/gpucanary.wxs, reading its tables back
// with msiinfo (msitools). Under wine, scripts/wine/msi_e2e.sh installs,
// upgrades and removes it.
package msi

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const upgradeCode = "{A1232CFA-8C09-4546-AE50-C885E9895726}"

// build runs scripts/dist-msi.sh on stand-in exes and licences and
// returns the MSI's path.
func build(t *testing.T, version, msiVersion, date string) string {
	t.Helper()
	for _, tool := range []string{"wixl", "msibuild", "msiinfo", "faketime"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make deps-test installs wixl, msitools and faketime)", tool)
		}
	}
	dir := t.TempDir()
	exes := filepath.Join(dir, "exes")
	lic := filepath.Join(dir, "licences")
	for _, d := range []string{exes, filepath.Join(lic, "go")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(exes, "gpucanary.exe"), "MZ console")
	write(filepath.Join(exes, "gpucanaryw.exe"), "MZ tray")
	write(filepath.Join(lic, "licenses.tsv"), "# library\tversion\tlicence\ngo\tgo1.25\tBSD-3-Clause\n")
	write(filepath.Join(lic, "go", "LICENSE"), "Go's licence text\n")
	out := filepath.Join(dir, "out")
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, "scripts", "dist-msi.sh"), out)
	cmd.Env = append(os.Environ(), "VERSION="+version, "MSI_VERSION="+msiVersion, "BUILD_DATE="+date,
		"EXES="+exes, "LICENCES="+lic, "SIGN_PKCS12=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/dist-msi.sh: %v\n%s", err, msg)
	}
	return filepath.Join(out, "gpucanary-"+version+"-x64.msi")
}

// table is one table of msi as rows of columns (msiinfo export: names,
// types and key columns first, then one row a line).
func table(t *testing.T, msi, name string) [][]string {
	t.Helper()
	out, err := exec.Command("msiinfo", "export", msi, name).Output()
	if err != nil {
		t.Fatalf("msiinfo export %s: %v", name, err)
	}
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("msiinfo export %s: %q", name, out)
	}
	var rows [][]string
	for _, l := range lines[3:] {
		rows = append(rows, strings.Split(l, "\t"))
	}
	return rows
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("a sequence number: %v", err)
	}
	return n
}

// find returns the rows whose column col is v.
func find(rows [][]string, col int, v string) [][]string {
	var got [][]string
	for _, r := range rows {
		if len(r) > col && r[col] == v {
			got = append(got, r)
		}
	}
	return got
}

func TestTables(t *testing.T) {
	msi := build(t, "1.2.3~rc1", "", "2026-01-01T00:00:00Z")

	props := map[string]string{}
	for _, r := range table(t, msi, "Property") {
		props[r[0]] = r[1]
	}
	for k, want := range map[string]string{
		"ProductName":     "GPU Canary",
		"ProductVersion":  "1.2.3", // the pre-release installs as its release
		"Manufacturer":    "GPU Canary",
		"UpgradeCode":     upgradeCode,
		"ARPPRODUCTICON":  "gpucanary.exe",
		"ARPHELPLINK":     "https://github.com/gpucanary/gpucanary/blob/main/docs/windows.md",
		"ARPURLINFOABOUT": "https://github.com/gpucanary/gpucanary",
		"AUTOSTART":       "0",
	} {
		if props[k] != want {
			t.Errorf("Property %s = %q, want %q", k, props[k], want)
		}
	}
	if _, ok := props["ALLUSERS"]; ok {
		t.Errorf("ALLUSERS is set (%q): the package installs per user", props["ALLUSERS"])
	}
	if !strings.Contains(props["ARPCOMMENTS"], "Apache-2.0") || !strings.Contains(props["ARPCOMMENTS"], `%AppData%\gpucanary`) {
		t.Errorf("ARPCOMMENTS %q names neither the licence nor the kept settings", props["ARPCOMMENTS"])
	}

	// %LOCALAPPDATA%\Programs\GPU Canary
	dirs := table(t, msi, "Directory")
	for _, want := range [][]string{{"INSTALLDIR", "ProgramsFolder", "GPU Canary"}, {"ProgramsFolder", "LocalAppDataFolder", "Programs"}} {
		if got := find(dirs, 0, want[0]); len(got) != 1 || got[0][1] != want[1] || got[0][2] != want[2] {
			t.Errorf("Directory %s: %q, want parent %s, name %s", want[0], got, want[1], want[2])
		}
	}
	files := table(t, msi, "File")
	for _, f := range []string{"gpucanaryw.exe", "gpucanary.exe", "LICENSE.txt", "THIRD_PARTY_LICENSES.txt", "README.md"} {
		if len(find(files, 2, f)) != 1 {
			t.Errorf("File table lacks %s: %q", f, files)
		}
	}

	sc := table(t, msi, "Shortcut")
	if len(sc) != 1 || sc[0][1] != "ProgramMenuFolder" || sc[0][2] != "GPU Canary" || sc[0][4] != "[INSTALLDIR]gpucanaryw.exe" {
		t.Errorf("Shortcut: %q, want GPU Canary in the Start menu starting the tray", sc)
	}

	// Every registry value, each component's key path among them, is
	// under HKMU (Root -1): HKCU per user, HKLM with ALLUSERS=1. wixl
	// writes HKMU as 4, which is no root; scripts/dist-msi.sh makes it -1.
	// The components are 64-bit (256, with 4: the key path is a registry
	// value), so HKLM's values are not redirected to WOW6432Node.
	reg := table(t, msi, "Registry")
	for _, r := range reg {
		if r[1] != "-1" {
			t.Errorf("registry value %s\\%s has root %s, want -1 (HKMU)", r[2], r[3], r[1])
		}
	}
	for _, c := range table(t, msi, "Component") {
		if key := find(reg, 0, c[5]); len(key) != 1 {
			t.Errorf("component %s's key path %s is not a registry value: %q", c[0], c[5], key)
		}
		if c[3] != "260" {
			t.Errorf("component %s's attributes are %s, want 260 (64-bit, keyed by a registry value)", c[0], c[3])
		}
	}
	run := find(reg, 2, `Software\Microsoft\Windows\CurrentVersion\Run`)
	if len(run) != 1 || run[0][3] != "GPU Canary" || run[0][4] != `"[INSTALLDIR]gpucanaryw.exe"` || run[0][5] != "Autostart" {
		t.Errorf("the Run-key value: %q", run)
	}
	// The Autostart feature installs only when AUTOSTART=1 raises the level.
	if f := find(table(t, msi, "Feature"), 0, "Autostart"); len(f) != 1 || f[0][5] != "2" {
		t.Errorf("Feature Autostart: %q, want level 2", f)
	}
	seq := find(table(t, msi, "InstallExecuteSequence"), 0, "AutostartLevel")
	if len(seq) != 1 || seq[0][1] != `AUTOSTART = "1"` {
		t.Errorf("InstallExecuteSequence AutostartLevel: %q", seq)
	}

	// Per machine with ALLUSERS=1: INSTALLDIR moves to Program Files
	// unless given, and the Start-menu folder to the all-users one where
	// the installer left it in the user's (wine's msi does; Windows sets
	// it so itself). Type 51 sets a property, before CostFinalize resolves
	// the folders, in both sequences (a full UI costs in the UI one).
	ca := table(t, msi, "CustomAction")
	for _, c := range []struct{ action, property, value, cond string }{
		{"PerMachineDir", "INSTALLDIR", `[ProgramFiles64Folder]GPU Canary\`, `ALLUSERS = 1 AND NOT INSTALLDIR`},
		{"PerMachineMenu", "ProgramMenuFolder", `[CommonAppDataFolder]Microsoft\Windows\Start Menu\Programs\`,
			`ALLUSERS = 1 AND NOT (ProgramMenuFolder ~>< CommonAppDataFolder)`},
	} {
		if r := find(ca, 0, c.action); len(r) != 1 || r[0][1] != "51" || r[0][2] != c.property || r[0][3] != c.value {
			t.Errorf("CustomAction %s: %q, want type 51 setting %s to %s", c.action, r, c.property, c.value)
		}
		for _, name := range []string{"InstallExecuteSequence", "InstallUISequence"} {
			seqs := table(t, msi, name)
			r := find(seqs, 0, c.action)
			cost := find(seqs, 0, "CostFinalize")
			if len(r) != 1 || len(cost) != 1 || r[0][1] != c.cond || atoi(t, r[0][2]) >= atoi(t, cost[0][2]) {
				t.Errorf("%s %s: %q, want it when %s, before CostFinalize (%q)", name, c.action, r, c.cond, cost)
			}
		}
	}

	// The tray is asked to quit before an uninstall or an upgrade replaces
	// its files, and started at the end of an install (LAUNCH): each runs
	// the installed gpucanaryw.exe (type 18: a file this package
	// installs), which opens no console window.
	seqs := table(t, msi, "InstallExecuteSequence")
	seqOf := func(action string) (cond string, n int) {
		r := find(seqs, 0, action)
		if len(r) != 1 {
			t.Fatalf("InstallExecuteSequence %s: %q", action, r)
		}
		n, err := strconv.Atoi(r[0][2])
		if err != nil {
			t.Fatal(err)
		}
		return r[0][1], n
	}
	for _, c := range []struct {
		action, typ, target string
		why                 string
	}{
		// 18 + 64 (continue: its exit status is not checked)
		{"QuitTray", "82", "quit --timeout 10s", "waited for, its failure ignored"},
		// 18 + 64 + 128 (asynchronous, not waited for)
		{"LaunchTray", "210", "", "not waited for"},
	} {
		r := find(ca, 0, c.action)
		if len(r) != 1 || r[0][1] != c.typ || r[0][2] != "gpucanaryw.exe" || r[0][3] != c.target {
			t.Errorf("CustomAction %s: %q, want type %s (gpucanaryw.exe %q, %s)", c.action, r, c.typ, c.target, c.why)
		}
	}
	_, costFinalize := seqOf("CostFinalize")
	_, findRelated := seqOf("FindRelatedProducts")
	_, validate := seqOf("InstallValidate")
	_, finalize := seqOf("InstallFinalize")
	cond, quit := seqOf("QuitTray")
	if cond != `REMOVE ~= "ALL" OR WIX_UPGRADE_DETECTED` || quit <= costFinalize || quit <= findRelated || quit >= validate {
		t.Errorf("QuitTray at %d when %q: want it on an uninstall or an upgrade, after CostFinalize (%d) and FindRelatedProducts (%d), before InstallValidate (%d)",
			quit, cond, costFinalize, findRelated, validate)
	}
	cond, launch := seqOf("LaunchTray")
	if cond != `NOT Installed AND NOT REMOVE AND (LAUNCH = "1" OR (UILevel = 5 AND LAUNCH <> "0"))` || launch <= finalize {
		t.Errorf("LaunchTray at %d when %q: want it after InstallFinalize (%d), on a new install with LAUNCH=1 or a full UI without LAUNCH=0", launch, cond, finalize)
	}
	if _, ok := props["LAUNCH"]; ok {
		t.Errorf("LAUNCH has a default (%q): unset, a full UI launches and a quiet install does not", props["LAUNCH"])
	}

	// MajorUpgrade: older versions of the same UpgradeCode are removed, a
	// newer one blocks the install.
	up := table(t, msi, "Upgrade")
	if len(up) != 2 {
		t.Fatalf("Upgrade: %q, want the upgrade and the downgrade rows", up)
	}
	for _, r := range up {
		if r[0] != upgradeCode {
			t.Errorf("Upgrade row %q has another UpgradeCode", r)
		}
	}
	if len(find(up, 6, "WIX_UPGRADE_DETECTED")) != 1 || len(find(up, 6, "WIX_DOWNGRADE_DETECTED")) != 1 {
		t.Errorf("Upgrade: %q", up)
	}
	if len(find(table(t, msi, "InstallExecuteSequence"), 0, "RemoveExistingProducts")) != 1 {
		t.Error("InstallExecuteSequence has no RemoveExistingProducts")
	}
}

// The same inputs give the same bytes; the next version keeps the
// UpgradeCode and gets another ProductCode.
func TestReproducibleAndVersioned(t *testing.T) {
	a := build(t, "1.2.3", "", "2026-01-01T00:00:00Z")
	b := build(t, "1.2.3", "", "2026-01-01T00:00:00Z")
	c := build(t, "1.2.4", "", "2026-01-01T00:00:00Z")
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if !bytes.Equal(da, db) {
		t.Error("two builds of the same inputs differ")
	}
	code := func(msi string) (product, upgrade string) {
		for _, r := range table(t, msi, "Property") {
			switch r[0] {
			case "ProductCode":
				product = r[1]
			case "UpgradeCode":
				upgrade = r[1]
			}
		}
		return
	}
	pa, ua := code(a)
	pc, uc := code(c)
	if ua != upgradeCode || uc != upgradeCode {
		t.Errorf("UpgradeCodes %s, %s; want %s", ua, uc, upgradeCode)
	}
	if !regexp.MustCompile(`^\{[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-8[0-9A-F]{3}-[0-9A-F]{12}\}$`).MatchString(pa) || pa == pc {
		t.Errorf("ProductCodes %s (1.2.3) and %s (1.2.4): want two different GUIDs", pa, pc)
	}
	sum, err := exec.Command("msiinfo", "suminfo", a).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sum), "Created: Thu Jan  1 00:00:00 2026") {
		t.Errorf("the summary's dates are not the build date:\n%s", sum)
	}
}
