package managers

import (
	"path/filepath"

	"golang.org/x/sys/windows"
)

// Bounds of the walks of the folders people unpack apps into: deep
// enough for a portable Stability Matrix (StabilityMatrix\Data\Packages\
// NAME\venv) and a Pinokio home (pinokio\api\APP\app\env), and few
// enough entries that a full Downloads folder or drive costs a fraction
// of the search's time budget.
const (
	appRootDepth   = 6
	appRootEntries = 20_000
	driveDepth     = 5
	driveEntries   = 20_000
)

// driveSkip are the folders at a drive's root that hold Windows, its
// programs and its users (home is walked on its own), never an unpacked
// app.
var driveSkip = []string{"Windows", "Program Files", "Program Files (x86)", "ProgramData", "Users",
	"$Recycle.Bin", "System Volume Information", "Recovery", "PerfLogs", "$WinREAgent", "Config.Msi", "Documents and Settings"}

// platformAppRoots: where Windows users unpack one-click apps: Desktop,
// Downloads and Documents (and OneDrive's Desktop and Documents, where
// OneDrive backup moves them), %LOCALAPPDATA%\Programs (where installers
// without admin rights put apps), and the root of every fixed drive
// (C:\pinokio, D:\ComfyUI_windows_portable).
func platformAppRoots(w Where) []Place {
	var out []Place
	add := func(p, from string, depth, entries int, skip []string) {
		if p != "" {
			out = append(out, Place{Path: p, Holds: HoldsTree, Depth: depth, Entries: entries, Skip: skip, From: from})
		}
	}
	if w.Home != "" {
		for _, f := range []string{"Desktop", "Downloads", "Documents", filepath.Join("OneDrive", "Desktop"), filepath.Join("OneDrive", "Documents")} {
			add(filepath.Join(w.Home, f), "where apps are unpacked: "+f, appRootDepth, appRootEntries, nil)
		}
	}
	local := w.env("LOCALAPPDATA")
	if local == "" && w.Home != "" {
		local = filepath.Join(w.Home, "AppData", "Local")
	}
	if local != "" {
		add(filepath.Join(local, "Programs"), `%LOCALAPPDATA%\Programs`, appRootDepth, appRootEntries, nil)
	}
	for _, d := range fixedDrives() {
		add(d, "the root of fixed drive "+d, driveDepth, driveEntries, driveSkip)
	}
	return out
}

// platformDrives are the fixed drives' roots.
func platformDrives() []string { return fixedDrives() }

// fixedDrives lists the roots of the machine's fixed drives (C:\, D:\),
// not removable, network or optical ones, whose walks would be slow or
// wake a disk.
func fixedDrives() []string {
	mask, err := windows.GetLogicalDrives()
	if err != nil {
		return nil
	}
	var out []string
	for i := 0; i < 26; i++ {
		if mask&(1<<i) == 0 {
			continue
		}
		root := string(rune('A'+i)) + `:\`
		p, err := windows.UTF16PtrFromString(root)
		if err != nil {
			continue
		}
		if windows.GetDriveType(p) == windows.DRIVE_FIXED {
			out = append(out, root)
		}
	}
	return out
}
