package pyenv

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// App is one application that keeps its own Python environment where it
// chooses: a one-click image or LLM app. The search (envsearch) finds its
// environments in its Places and by walking; AppOf names the app beside
// an environment's path. A new app is one more entry in apps (and its
// fixture in pyenvtest), not an edit in any reader.
type App struct {
	// Name is how the app is shown beside an environment's path; the
	// folder a "*" of Envs matched (a package, an app's folder) is added
	// in parentheses.
	Name string
	// Envs are where the app keeps its environments, relative to its
	// folder, '/'-separated; "*" is any one folder name.
	Envs []string
	// Marks are entries of the app's folder ('/'-separated, relative),
	// any one of which says the folder is this app's: a venv folder
	// alone says nothing.
	Marks []string
	// Places are the app's own folders, from its settings or its
	// defaults; nil when it lives wherever its user unpacked it, which
	// the walks of home and (on Windows) the usual folders find.
	Places func(Where) []Place
}

// apps is the table, most specific first: AppOf takes the first app
// whose Envs and Marks an environment matches (Forge before
// AUTOMATIC1111, whose webui.py Forge keeps too).
//
// Sources, each app's own installer or launcher: ComfyUI's Windows
// portable release (python_embeded, run_nvidia_gpu.bat, ComfyUI\main.py);
// Fooocus' Windows package (python_embeded beside Fooocus\); the
// one-click packages of AUTOMATIC1111 (sd.webui: system\python, webui\)
// and Forge (the same, webui\modules_forge); AUTOMATIC1111's and Forge's
// webui.bat and webui.sh (venv in the checkout); Stability Matrix's
// SettingsManager (library Data\.sm-portable or library.json's
// LibraryPath; Packages\NAME\venv); Pinokio's home (api\APP\...\env,
// created with `python -m venv env` by its scripts); InvokeAI's launcher
// (a uv .venv in the root that holds invokeai.yaml); text-generation-
// webui's one_click.py (installer_files\env, a conda prefix); pixi
// (.pixi\envs\NAME, conda prefixes, in a project with pixi.toml or
// pyproject.toml).
var apps = []App{
	{Name: "ComfyUI portable", Envs: []string{"python_embeded"}, Marks: []string{"ComfyUI/main.py", "run_nvidia_gpu.bat", "run_cpu.bat"}},
	{Name: "Fooocus", Envs: []string{"python_embeded"}, Marks: []string{"Fooocus/entry_with_update.py", "Fooocus/launch.py"}},
	{Name: "Forge (one-click package)", Envs: []string{"system/python"}, Marks: []string{"webui/modules_forge"}},
	{Name: "AUTOMATIC1111 (one-click package)", Envs: []string{"system/python"}, Marks: []string{"webui/webui.py"}},
	{Name: "Forge", Envs: []string{"venv"}, Marks: []string{"modules_forge"}},
	{Name: "AUTOMATIC1111", Envs: []string{"venv"}, Marks: []string{"webui.py"}},
	{Name: "ComfyUI", Envs: []string{"venv", ".venv"}, Marks: []string{"comfy/model_management.py"}},
	{Name: "Stability Matrix", Envs: []string{"Packages/*/venv"}, Marks: []string{".sm-portable", "settings.json"}, Places: stabilityMatrixPlaces},
	{Name: "Pinokio", Envs: []string{"api/*/env", "api/*/*/env", "api/*/*/*/env"}, Marks: []string{"ENVIRONMENT", "bin"}, Places: pinokioPlaces},
	{Name: "InvokeAI", Envs: []string{".venv"}, Marks: []string{"invokeai.yaml"}, Places: invokeAIPlaces},
	{Name: "text-generation-webui", Envs: []string{"installer_files/env"}, Marks: []string{"one_click.py", "start_windows.bat", "start_linux.sh"}},
	{Name: "pixi", Envs: []string{".pixi/envs/*"}, Marks: []string{"pixi.toml", "pyproject.toml"}},
}

// AppOf names the app whose environment env is ("ComfyUI portable",
// "Stability Matrix (ComfyUI)"), or "" when it is no known app's.
func AppOf(env string) string { return realReader.appOf(env) }

// appOf is AppOf looking at the reader's disk.
func (rd *Reader) appOf(env string) string {
	env = strings.TrimRight(env, `/\`)
	for _, a := range apps {
		for _, pat := range a.Envs {
			root, star, ok := matchTail(env, strings.Split(pat, "/"))
			if !ok || !rd.hasMark(root, a.Marks) {
				continue
			}
			if star != "" {
				return a.Name + " (" + star + ")"
			}
			return a.Name
		}
	}
	return ""
}

// matchTail matches pattern against the last folders of path, names
// case-insensitively (Windows' folders are), at either separator (an
// environment of the Windows layout read on Linux keeps its own): it
// returns the app's folder (what is left) and the name the first "*"
// matched.
func matchTail(path string, pattern []string) (root, star string, ok bool) {
	root = path
	for i := len(pattern) - 1; i >= 0; i-- {
		cut := strings.LastIndexAny(root, `/\`)
		if cut <= 0 {
			return "", "", false
		}
		name := root[cut+1:]
		switch {
		case pattern[i] == "*":
			star = name
		case !strings.EqualFold(pattern[i], name):
			return "", "", false
		}
		root = root[:cut]
	}
	if strings.HasSuffix(root, ":") {
		root += `\` // C:
	}
	return root, star, true
}

// hasMark reports whether any of marks is in dir.
func (rd *Reader) hasMark(dir string, marks []string) bool {
	for _, m := range marks {
		if rd.exists(filepath.Join(dir, filepath.FromSlash(m))) {
			return true
		}
	}
	return false
}

// appPlaces are every app's own places, and where people unpack such
// apps (platformAppRoots: Windows' usual folders and the roots of its
// fixed drives, each searched to a shallow depth within a budget).
func appPlaces(w Where) []Place {
	var out []Place
	for _, a := range apps {
		if a.Places != nil {
			out = append(out, a.Places(w)...)
		}
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
	data, err := realReader.readSmall(file, smallFileLimit)
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
