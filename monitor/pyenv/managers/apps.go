package managers

import (
	"encoding/json"
	"path/filepath"
)

// appOwnPlaces are the apps' own folders, from their settings or their
// defaults, in the order of pyenv's apps table; an app not here lives
// wherever its user unpacked it, which the walks of home and (on
// Windows) the usual folders find. They are here, not in pyenv's apps
// table, because only the search reads them: the read names an app
// (pyenv.AppOf) from its marks alone.
var appOwnPlaces = []func(Where) []Place{stabilityMatrixPlaces, pinokioPlaces, invokeAIPlaces}

// appPlaces are every app's own places, and where people unpack such
// apps (platformAppRoots: Windows' usual folders and the roots of its
// fixed drives, each searched to a shallow depth within a budget).
func appPlaces(w Where) []Place {
	var out []Place
	for _, places := range appOwnPlaces {
		out = append(out, places(w)...)
	}
	return append(out, platformAppRoots(w)...)
}

// stabilityMatrixPlaces: Stability Matrix keeps its packages in its
// library's Packages folder; the library is named by library.json
// (LibraryPath) in its app-data home, %APPDATA%\StabilityMatrix (Linux:
// ~/.config/StabilityMatrix), or STABILITY_MATRIX_APPDATAHOME; a
// portable install keeps it in Data beside the program (.sm-portable),
// found by the walks.
func stabilityMatrixPlaces(w Where) []Place {
	home := w.env("STABILITY_MATRIX_APPDATAHOME")
	from := "$STABILITY_MATRIX_APPDATAHOME"
	if home == "" {
		d := appDataDir(w)
		if d == "" {
			return nil
		}
		home, from = filepath.Join(d, "StabilityMatrix"), ""
	}
	file := filepath.Join(home, "library.json")
	if from == "" {
		from = file
	}
	data, err := readSmall(file, smallFileLimit)
	if err != nil {
		return nil
	}
	var lib struct {
		LibraryPath string `json:"LibraryPath"`
	}
	if json.Unmarshal(data, &lib) != nil || lib.LibraryPath == "" {
		return nil
	}
	p := w.expand(lib.LibraryPath)
	return []Place{{Path: filepath.Join(p, "Packages"), Holds: HoldsEnvs, Depth: 2, From: from + " LibraryPath"}}
}

// pinokioPlaces: Pinokio's home defaults to ~/pinokio; on Windows people
// often put it at a drive's root (C:\pinokio, D:\pinokio), looked at
// directly, since a walk of a drive may run out of time before it gets
// there; a home elsewhere is found by the walks. Each app is a folder
// of api/ whose scripts make a venv named env in it or in a folder of it
// (app/env).
func pinokioPlaces(w Where) []Place {
	var out []Place
	add := func(home, from string) {
		out = append(out, Place{Path: filepath.Join(home, "api"), Holds: HoldsEnvs, Depth: 4, From: from})
	}
	if w.Home != "" {
		add(filepath.Join(w.Home, "pinokio"), named("Pinokio", filepath.Join(w.Home, "pinokio")))
	}
	for _, d := range platformDrives() {
		add(filepath.Join(d, "pinokio"), "Pinokio's usual folder "+filepath.Join(d, "pinokio"))
	}
	return out
}

// invokeAIPlaces: InvokeAI's root is INVOKEAI_ROOT, else ~/invokeai,
// the launcher's default; its environment is the root's .venv.
func invokeAIPlaces(w Where) []Place {
	if v := w.env("INVOKEAI_ROOT"); v != "" {
		return []Place{{Path: filepath.Join(w.expand(v), ".venv"), Holds: HoldsEnv, From: "$INVOKEAI_ROOT"}}
	}
	if w.Home == "" {
		return nil
	}
	root := filepath.Join(w.Home, "invokeai")
	return []Place{{Path: filepath.Join(root, ".venv"), Holds: HoldsEnv, From: named("InvokeAI", root)}}
}

// appDataDir is where desktop apps keep their settings: %APPDATA% on
// Windows (.NET's SpecialFolder.ApplicationData), $XDG_CONFIG_HOME or
// ~/.config elsewhere.
func appDataDir(w Where) string {
	if v := w.env("APPDATA"); v != "" && filepath.IsAbs(v) {
		return v
	}
	return xdgDirs(w).config
}
