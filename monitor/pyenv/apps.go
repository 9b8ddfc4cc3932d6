package pyenv

import (
	"path/filepath"
	"strings"
)

// App is one application that keeps its own Python environment where it
// chooses: a one-click image or LLM app. AppOf names the app beside an
// environment's path; the search (envsearch) finds its environments by
// walking and in the app's own folders, which are the managers package's
// (monitor/pyenv/managers, apps.go), since only the search needs them. A
// new app is one more entry in apps (and its fixture in pyenvtest), not
// an edit in any reader.
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
}

// apps is the table, most specific first: AppOf takes the first app
// whose Envs and Marks an environment matches (a launcher before the
// apps it installs, Forge before AUTOMATIC1111, whose webui.py Forge
// keeps too).
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
	// Launchers that install other apps first: a Stability Matrix
	// package is that app's own checkout (Packages/ComfyUI holds
	// ComfyUI's marks), and is labelled "Stability Matrix (ComfyUI)".
	{Name: "Stability Matrix", Envs: []string{"Packages/*/venv"}, Marks: []string{".sm-portable", "settings.json"}},
	{Name: "Pinokio", Envs: []string{"api/*/env", "api/*/*/env", "api/*/*/*/env"}, Marks: []string{"ENVIRONMENT", "bin"}},
	{Name: "ComfyUI portable", Envs: []string{"python_embeded"}, Marks: []string{"ComfyUI/main.py", "run_nvidia_gpu.bat", "run_cpu.bat"}},
	{Name: "Fooocus", Envs: []string{"python_embeded"}, Marks: []string{"Fooocus/entry_with_update.py", "Fooocus/launch.py"}},
	{Name: "Forge (one-click package)", Envs: []string{"system/python"}, Marks: []string{"webui/modules_forge"}},
	{Name: "AUTOMATIC1111 (one-click package)", Envs: []string{"system/python"}, Marks: []string{"webui/webui.py"}},
	{Name: "Forge", Envs: []string{"venv"}, Marks: []string{"modules_forge"}},
	{Name: "AUTOMATIC1111", Envs: []string{"venv"}, Marks: []string{"webui.py"}},
	{Name: "ComfyUI", Envs: []string{"venv", ".venv"}, Marks: []string{"comfy/model_management.py"}},
	{Name: "InvokeAI", Envs: []string{".venv"}, Marks: []string{"invokeai.yaml"}},
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
