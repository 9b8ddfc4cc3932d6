package pyenvtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// embeddedFiles are python.org's embeddable package for Python py
// ("3.12") as ComfyUI's portable release ships it: python.exe,
// python312.dll, the standard library zipped in python312.zip, and
// python312._pth with the two edits ComfyUI's release workflow makes
// (../ComfyUI first, `import site` at the end, so that the
// Lib\site-packages its get-pip.py made is on the path).
func embeddedFiles(py string) map[string]string {
	xy := "python" + strings.ReplaceAll(py, ".", "")
	return map[string]string{
		"python.exe":       "MZ",
		"pythonw.exe":      "MZ",
		"python3.dll":      "MZ",
		xy + ".dll":        "MZ",
		xy + ".zip":        "PK\x05\x06" + strings.Repeat("\x00", 18),
		xy + "._pth":       EmbeddedPth(py, "../ComfyUI", true),
		"Scripts/pip.exe":  "MZ",
		"LICENSE.txt":      "",
		"vcruntime140.dll": "MZ",
	}
}

// EmbeddedPth is the text of a ._pth file for Python py: the extra
// folders first (ComfyUI's ../ComfyUI), then what python.org's
// embeddable package ships (the zip, "."), then `import site` when site
// is true, as ComfyUI's release appends it.
func EmbeddedPth(py string, extra string, site bool) string {
	xy := "python" + strings.ReplaceAll(py, ".", "")
	s := ""
	if extra != "" {
		s += extra + "\n"
	}
	s += xy + ".zip\n.\n\n# Uncomment to run site.main() automatically\n#import site\n"
	if site {
		s += "import site\n"
	}
	return s
}

// ComfyUIPortable lays out ComfyUI's Windows portable release in dir
// (ComfyUI_windows_portable): python_embeded, an embedded Python holding
// s's packages, beside ComfyUI\ and the launchers. It returns the
// environment, python_embeded.
func ComfyUIPortable(dir string, s Spec) (string, error) {
	return embeddedApp(dir, "python_embeded", s, map[string]string{
		"ComfyUI/main.py":                   "import comfy\n",
		"ComfyUI/comfy/model_management.py": "",
		"run_nvidia_gpu.bat":                ".\\python_embeded\\python.exe -s ComfyUI\\main.py --windows-standalone-build\npause\n",
		"run_cpu.bat":                       ".\\python_embeded\\python.exe -s ComfyUI\\main.py --cpu --windows-standalone-build\npause\n",
	})
}

// Fooocus lays out Fooocus' Windows package in dir: python_embeded
// beside Fooocus\ and run.bat.
func Fooocus(dir string, s Spec) (string, error) {
	return embeddedApp(dir, "python_embeded", s, map[string]string{
		"Fooocus/entry_with_update.py": "",
		"Fooocus/launch.py":            "",
		"run.bat":                      ".\\python_embeded\\python.exe -s Fooocus\\entry_with_update.py\npause\n",
	})
}

// WebUIPackage lays out the one-click package of AUTOMATIC1111 (or,
// forge, Forge) in dir: system\python, an embedded Python, beside
// webui\ and run.bat.
func WebUIPackage(dir string, forge bool, s Spec) (string, error) {
	files := map[string]string{"webui/webui.py": "", "webui/launch.py": "", "run.bat": "call environment.bat\ncd webui\ncall webui-user.bat\n"}
	if forge {
		files["webui/modules_forge/__init__.py"] = ""
	}
	return embeddedApp(dir, filepath.Join("system", "python"), s, files)
}

func embeddedApp(dir, env string, s Spec, files map[string]string) (string, error) {
	s.Manager = "embedded"
	p := filepath.Join(dir, env)
	if err := Write(p, s); err != nil {
		return "", err
	}
	return p, writeFiles(dir, files)
}

// WebUI lays out a checkout of AUTOMATIC1111's stable-diffusion-webui
// (or, forge, Forge's) in dir with the venv its webui.bat or webui.sh
// makes in it; s.Layout picks Windows' or Linux'.
func WebUI(dir string, forge bool, s Spec) (string, error) {
	files := map[string]string{"webui.py": "", "launch.py": "", "webui.sh": "#!/usr/bin/env bash\n", "webui.bat": "@echo off\n"}
	if forge {
		files["modules_forge/__init__.py"] = ""
	}
	return appEnv(dir, "venv", s, files)
}

// StabilityMatrix lays out a Stability Matrix library at lib with
// package pkg (ComfyUI) and its venv, and the settings.json the app
// keeps there; portable adds Data's .sm-portable marker (lib is then
// the Data folder beside the program). It returns the venv.
//
// The package folder is that app's own checkout, as Stability Matrix
// clones it: ComfyUI's holds comfy/model_management.py, Forge's
// modules_forge and webui.py, AUTOMATIC1111's webui.py, so the
// environment matches those apps' own marks too.
func StabilityMatrix(lib, pkg string, portable bool, s Spec) (string, error) {
	files := map[string]string{"settings.json": "{\n  \"InstalledPackages\": []\n}\n",
		"Packages/" + pkg + "/main.py": ""}
	checkout := map[string][]string{
		"ComfyUI":                      {"comfy/model_management.py"},
		"stable-diffusion-webui-forge": {"modules_forge/__init__.py", "webui.py", "launch.py"},
		"stable-diffusion-webui":       {"webui.py", "launch.py"},
	}
	for _, f := range checkout[pkg] {
		files["Packages/"+pkg+"/"+f] = ""
	}
	if portable {
		files[".sm-portable"] = ""
	}
	return appEnv(lib, filepath.Join("Packages", pkg, "venv"), s, files)
}

// Pinokio lays out a Pinokio home with app (comfy.git) installed, its
// venv at api\APP\app\env as Pinokio's install scripts make it.
func Pinokio(home, app string, s Spec) (string, error) {
	files := map[string]string{"ENVIRONMENT": "PINOKIO_DRIVE=./drive\n", "bin/.keep": "",
		"api/" + app + "/pinokio.js": "module.exports = {}\n", "api/" + app + "/app/main.py": ""}
	return appEnv(home, filepath.Join("api", app, "app", "env"), s, files)
}

// InvokeAI lays out an InvokeAI root (invokeai.yaml) with the uv venv
// its launcher makes at .venv.
func InvokeAI(root string, s Spec) (string, error) {
	s.Manager = "uv"
	return appEnv(root, ".venv", s, map[string]string{"invokeai.yaml": "# Internal metadata\nschema_version: 4.0.2\n"})
}

// TextGenWebUI lays out text-generation-webui with the conda prefix its
// one_click.py makes at installer_files\env.
func TextGenWebUI(dir string, s Spec) (string, error) {
	s.Manager = "conda"
	return appEnv(dir, filepath.Join("installer_files", "env"), s, map[string]string{
		"one_click.py": "", "start_linux.sh": "#!/usr/bin/env bash\n", "start_windows.bat": "@echo off\n", "server.py": ""})
}

// Pixi lays out a pixi project in dir with environment name, a conda
// prefix at .pixi\envs\NAME.
func Pixi(dir, name string, s Spec) (string, error) {
	s.Manager = "conda"
	return appEnv(dir, filepath.Join(".pixi", "envs", name), s, map[string]string{
		"pixi.toml": "[workspace]\nname = \"ml\"\nchannels = [\"conda-forge\"]\nplatforms = [\"linux-64\", \"win-64\"]\n"})
}

func appEnv(dir, env string, s Spec, files map[string]string) (string, error) {
	p := filepath.Join(dir, env)
	if err := Write(p, s); err != nil {
		return "", err
	}
	return p, writeFiles(dir, files)
}

func writeFiles(dir string, files map[string]string) error {
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write app files in %s: %w", dir, err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return fmt.Errorf("write app files in %s: %w", dir, err)
		}
	}
	return nil
}
