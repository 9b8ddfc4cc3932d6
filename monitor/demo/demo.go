// Package demo writes GPU Canary's demonstration: a home folder holding
// the environments of the incidents GPU Canary exists for (a healthy
// CUDA venv, a uv project whose `uv run` put a CPU torch in place of the
// CUDA one, llama-cpp-python built without its CUDA backend, ComfyUI's
// portable release) and a simulated machine with two GPUs to judge them
// against, so that a person can try GPU Canary, and the screenshots can
// be made, without a GPU and without touching their own environments.
// The environments are written file by file as their installers write
// them (monitor/pyenv/pyenvtest); no Python runs.
package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	gpusim "github.com/gpucanary/gpucanary/examples/gpu-sim"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// Demo is a demonstration written to disk.
type Demo struct {
	Dir      string   // the folder it was written in
	Home     string   // the home folder its programs run with (Dir/home)
	Scenario string   // the simulated GPUs (Dir/gpu-sim.json)
	Envs     []string // the environments, in the order Envs lists them
}

// Env is one of the demonstration's environments: where it is under the
// home folder, what it shows, and how it is written there.
type Env struct {
	Path  string // under the home folder, slash-separated
	Shows string
	write func(path string) (string, error) // writes it; the environment's own path
}

// Envs are the demonstration's environments, in the order a person
// reads about them.
var Envs = []Env{
	{Path: "work/vision/.venv", Shows: "a healthy CUDA 12.4 torch and torchvision, installed with pip",
		write: spec(pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip"},
			Vision: &pyenvtest.Companion{Version: "0.20.1+cu124", CUDA: "12.4"}})},
	{Path: "work/chatbot/.venv", Shows: "a uv project whose `uv run` replaced the CUDA torch with a CPU build",
		write: uvOverwrite},
	{Path: "work/llm/.venv", Shows: "llama-cpp-python without its CUDA backend: every layer on the CPU",
		write: spec(pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip"},
			Llama: &pyenvtest.Llama{Version: "0.3.2", Backends: []string{"cpu"}}})},
	{Path: "ComfyUI_windows_portable", Shows: "ComfyUI's Windows portable release, its embedded Python with a CUDA 12.4 torch",
		write: func(dir string) (string, error) {
			return pyenvtest.ComfyUIPortable(dir, pyenvtest.Spec{Layout: pyenv.LayoutWindows,
				Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip"}})
		}},
}

func spec(s pyenvtest.Spec) func(string) (string, error) {
	return func(path string) (string, error) { return path, pyenvtest.Write(path, s) }
}

// uvOverwrite writes incident 1 of DESIGN.md: a uv project asking for
// torch with no index of its own, whose `uv run` resolved it from PyPI's
// default index and put a CPU build where the CUDA one was.
func uvOverwrite(path string) (string, error) {
	if err := pyenvtest.Write(path, pyenvtest.Spec{Manager: "uv",
		Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "uv"}}); err != nil {
		return "", err
	}
	project := "[project]\nname = \"chatbot\"\nversion = \"0.1.0\"\nrequires-python = \">=3.11\"\ndependencies = [\"torch>=2.0\"]\n"
	return path, os.WriteFile(filepath.Join(filepath.Dir(path), "pyproject.toml"), []byte(project), 0o644)
}

// Write writes the demonstration into dir, which must be empty or not
// exist yet: a demo never writes over what is there.
func Write(dir string) (Demo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Demo{}, fmt.Errorf("writing the demo in %s: %w", dir, err)
	}
	if ents, err := os.ReadDir(abs); err == nil && len(ents) > 0 {
		return Demo{}, fmt.Errorf("writing the demo in %s: the folder is not empty", abs)
	}
	d := Demo{Dir: abs, Home: filepath.Join(abs, "home"), Scenario: filepath.Join(abs, "gpu-sim.json")}
	if err := os.MkdirAll(d.Home, 0o755); err != nil {
		return Demo{}, fmt.Errorf("writing the demo: %w", err)
	}
	for _, e := range Envs {
		env, err := e.write(filepath.Join(d.Home, filepath.FromSlash(e.Path)))
		if err != nil {
			return Demo{}, fmt.Errorf("writing the demo's %s: %w", e.Path, err)
		}
		d.Envs = append(d.Envs, env)
	}
	if err := os.WriteFile(d.Scenario, gpusim.TwoGPUs, 0o644); err != nil {
		return Demo{}, fmt.Errorf("writing the demo's GPUs: %w", err)
	}
	return d, nil
}

// managerVars name an active environment or where a manager keeps its
// environments (monitor/pyenv's managers table and the search read
// them): the demonstration's programs run without them.
var managerVars = []string{"VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_ENVS_PATH", "MAMBA_ROOT_PREFIX",
	"PYENV_ROOT", "WORKON_HOME", "PIPX_HOME", "HATCH_DATA_DIR", "INVOKEAI_ROOT", "JUPYTER_DATA_DIR", "JUPYTER_PATH",
	"POETRY_CACHE_DIR", "POETRY_CONFIG_DIR", "POETRY_VIRTUALENVS_PATH", "UV_PYTHON_INSTALL_DIR", "UV_TOOL_DIR"}

// Environ is the environment the demonstration's programs run with:
// base with the home folder, the settings, state and cache folders all
// inside the demonstration (the user's own settings, history and
// environments are neither read nor changed) and its simulated GPUs.
func (d Demo) Environ(base []string) []string {
	set := map[string]string{
		"HOME":              d.Home,
		"USERPROFILE":       d.Home,
		"XDG_CONFIG_HOME":   filepath.Join(d.Home, ".config"),
		"XDG_STATE_HOME":    filepath.Join(d.Home, ".local", "state"),
		"XDG_CACHE_HOME":    filepath.Join(d.Home, ".cache"),
		"XDG_DATA_HOME":     filepath.Join(d.Home, ".local", "share"),
		"APPDATA":           filepath.Join(d.Home, "AppData", "Roaming"),
		"LOCALAPPDATA":      filepath.Join(d.Home, "AppData", "Local"),
		"GPUCANARY_GPU_SIM": d.Scenario,
	}
	// The user's active environment and the managers' folders the
	// variables name are theirs, not the demonstration's.
	for _, k := range managerVars {
		set[k] = ""
	}
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(set))
	for k, v := range set {
		if v != "" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		out = append(out, k+"="+set[k])
	}
	return out
}
