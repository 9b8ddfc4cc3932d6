package envsearch_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// A Poetry env as virtualenv 20 writes it (Poetry creates its envs with
// virtualenv): pyvenv.cfg with version_info and virtualenv keys.
func poetryVenv(t testing.TB, p string) string {
	must(t, pyenvtest.Write(p, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1", Installer: "Poetry 1.8.3"}}))
	writeFile(t, p, "pyvenv.cfg", cfgVirtualenv+"prompt = demo-py3.11\n")
	return p
}

// A venv as CPython's venv module writes it.
func stdVenv(t testing.TB, p string) string {
	must(t, pyenvtest.Write(p, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1", Installer: "pip\n"}}))
	writeFile(t, p, "pyvenv.cfg", cfgVenv)
	return p
}

// TestManagerDefaultPlaces: every manager with places finds its
// environments where the tool itself keeps them, read as the tool reads
// its settings (variable, then config file, then default), and says how.
// A manager added to the table with Places needs a case here.
func TestManagerDefaultPlaces(t *testing.T) {
	type fixture struct {
		vars  map[string]string
		setup func(t *testing.T, home, other string) (env, from string)
	}
	cases := map[string][]fixture{
		"uv": {
			{setup: func(t *testing.T, home, _ string) (string, string) {
				p := filepath.Join(home, ".local", "share", "uv", "tools", "ruff")
				must(t, pyenvtest.Write(p, pyenvtest.Spec{Manager: "uv"}))
				return p, "uv's default " + filepath.Join(home, ".local", "share", "uv", "tools")
			}},
			{vars: map[string]string{"UV_PYTHON_INSTALL_DIR": "OTHER/pythons"}, setup: func(t *testing.T, _, other string) (string, string) {
				p := filepath.Join(other, "pythons", "cpython-3.12.3-linux-x86_64-gnu")
				writePrefix(t, p, "3.12")
				return p, "$UV_PYTHON_INSTALL_DIR"
			}},
		},
		"conda": {
			{setup: func(t *testing.T, home, other string) (string, string) {
				p := filepath.Join(other, "team-envs", "shared")
				must(t, pyenvtest.Write(p, pyenvtest.Spec{Manager: "conda"}))
				writeFile(t, home, ".condarc", "channels:\n  - conda-forge\nenvs_dirs:\n  - "+filepath.Join(other, "team-envs")+"\n  - ~/more-envs\n")
				return p, filepath.Join(home, ".condarc") + " envs_dirs"
			}},
			{vars: map[string]string{"CONDA_ENVS_PATH": "OTHER/a" + string(os.PathListSeparator) + "OTHER/b"}, setup: func(t *testing.T, _, other string) (string, string) {
				p := filepath.Join(other, "b", "ml")
				must(t, pyenvtest.Write(p, pyenvtest.Spec{Manager: "conda"}))
				return p, "$CONDA_ENVS_PATH"
			}},
			{vars: map[string]string{"MAMBA_ROOT_PREFIX": "OTHER/mamba"}, setup: func(t *testing.T, _, other string) (string, string) {
				p := filepath.Join(other, "mamba", "envs", "torch")
				must(t, pyenvtest.Write(p, pyenvtest.Spec{Manager: "conda"}))
				return p, "$MAMBA_ROOT_PREFIX"
			}},
		},
		"poetry": {
			{setup: func(t *testing.T, home, _ string) (string, string) {
				dir := filepath.Join(home, ".cache", "pypoetry", "virtualenvs")
				return poetryVenv(t, filepath.Join(dir, "demo-a-YUHOv6-py3.11")), "Poetry's default " + filepath.Join(home, ".cache", "pypoetry") + "/virtualenvs"
			}},
			{setup: func(t *testing.T, home, other string) (string, string) {
				writeFile(t, home, ".config/pypoetry/config.toml", "[virtualenvs]\npath = \""+filepath.ToSlash(filepath.Join(other, "poetry-envs"))+"\"\n")
				return poetryVenv(t, filepath.Join(other, "poetry-envs", "demo-a-YUHOv6-py3.11")), filepath.Join(home, ".config", "pypoetry", "config.toml") + " virtualenvs.path"
			}},
			{vars: map[string]string{"POETRY_CACHE_DIR": "OTHER/pc"}, setup: func(t *testing.T, _, other string) (string, string) {
				return poetryVenv(t, filepath.Join(other, "pc", "virtualenvs", "demo-a-YUHOv6-py3.12")), "$POETRY_CACHE_DIR/virtualenvs"
			}},
			{vars: map[string]string{"POETRY_VIRTUALENVS_PATH": "OTHER/pv"}, setup: func(t *testing.T, _, other string) (string, string) {
				return poetryVenv(t, filepath.Join(other, "pv", "demo-a-YUHOv6-py3.11")), "$POETRY_VIRTUALENVS_PATH"
			}},
		},
		"pdm": {
			{setup: func(t *testing.T, home, _ string) (string, string) {
				dir := filepath.Join(home, ".local", "share", "pdm", "venvs")
				return stdVenv(t, filepath.Join(dir, "demo-7D3v_JvL-3.11")), "PDM's default " + dir
			}},
			{setup: func(t *testing.T, home, other string) (string, string) {
				writeFile(t, home, ".config/pdm/config.toml", "[venv]\nlocation = \""+filepath.ToSlash(filepath.Join(other, "pdm-venvs"))+"\"\n")
				return stdVenv(t, filepath.Join(other, "pdm-venvs", "demo-7D3v_JvL-3.11")), filepath.Join(home, ".config", "pdm", "config.toml") + " venv.location"
			}},
		},
		"pipenv": {
			{setup: func(t *testing.T, home, _ string) (string, string) {
				dir := filepath.Join(home, ".local", "share", "virtualenvs")
				return stdVenv(t, filepath.Join(dir, "simple-project-H2mHdmH0")), "pipenv's default " + dir
			}},
			{vars: map[string]string{"XDG_DATA_HOME": "OTHER/xdg"}, setup: func(t *testing.T, _, other string) (string, string) {
				dir := filepath.Join(other, "xdg", "virtualenvs")
				return stdVenv(t, filepath.Join(dir, "simple-project-H2mHdmH0")), "pipenv's default " + dir
			}},
		},
		"hatch": {
			{setup: func(t *testing.T, home, _ string) (string, string) {
				// deeper than any walk's depth from home would look for it by luck
				data := filepath.Join(home, ".local", "share", "hatch")
				return stdVenv(t, filepath.Join(data, "env", "virtual", "demo", "a-YUHOv6", "demo")), "hatch's default " + data
			}},
			{vars: map[string]string{"HATCH_DATA_DIR": "OTHER/hd"}, setup: func(t *testing.T, _, other string) (string, string) {
				return stdVenv(t, filepath.Join(other, "hd", "env", "virtual", "demo", "a-YUHOv6", "test")), "$HATCH_DATA_DIR"
			}},
		},
		"virtualenvwrapper": {
			{setup: func(t *testing.T, home, _ string) (string, string) {
				dir := filepath.Join(home, ".virtualenvs")
				return stdVenv(t, filepath.Join(dir, "ml")), "virtualenvwrapper's default " + dir
			}},
			{vars: map[string]string{"WORKON_HOME": "OTHER/workon"}, setup: func(t *testing.T, _, other string) (string, string) {
				return stdVenv(t, filepath.Join(other, "workon", "ml")), "$WORKON_HOME"
			}},
		},
		"pyenv": {
			{setup: func(t *testing.T, home, _ string) (string, string) {
				p := filepath.Join(home, ".pyenv", "versions", "3.11.7")
				writePrefix(t, p, "3.11")
				return p, "pyenv's default " + filepath.Join(home, ".pyenv")
			}},
			{vars: map[string]string{"PYENV_ROOT": "OTHER/pyenv"}, setup: func(t *testing.T, _, other string) (string, string) {
				// pyenv-virtualenv: versions/3.11.7/envs/ml, linked as versions/ml
				versions := filepath.Join(other, "pyenv", "versions")
				writePrefix(t, filepath.Join(versions, "3.11.7"), "3.11")
				env := stdVenv(t, filepath.Join(versions, "3.11.7", "envs", "ml"))
				must(t, os.Symlink(env, filepath.Join(versions, "ml")))
				return env, "$PYENV_ROOT" // found once, by its own path
			}},
		},
		"pipx": {
			{setup: func(t *testing.T, home, _ string) (string, string) {
				h := filepath.Join(home, ".local", "share", "pipx")
				return stdVenv(t, filepath.Join(h, "venvs", "black")), "pipx's default " + h
			}},
			{vars: map[string]string{"PIPX_HOME": "OTHER/px"}, setup: func(t *testing.T, _, other string) (string, string) {
				return stdVenv(t, filepath.Join(other, "px", "venvs", "black")), "$PIPX_HOME"
			}},
		},
		"jupyter": {
			{setup: func(t *testing.T, home, other string) (string, string) {
				env := stdVenv(t, filepath.Join(other, "kernel-env"))
				k := filepath.Join(home, ".local", "share", "jupyter", "kernels", "ml")
				// as `python -m ipykernel install --user --name ml` writes it
				writeFile(t, k, "kernel.json", `{
 "argv": [
  "`+filepath.ToSlash(filepath.Join(env, "bin", "python"))+`",
  "-m",
  "ipykernel_launcher",
  "-f",
  "{connection_file}"
 ],
 "display_name": "ml",
 "language": "python",
 "metadata": {
  "debugger": true
 }
}`)
				return env, filepath.Join(k, "kernel.json")
			}},
			{vars: map[string]string{"JUPYTER_PATH": "OTHER/share/jupyter"}, setup: func(t *testing.T, _, other string) (string, string) {
				// a prefix's own kernel: argv[0] "python" runs that prefix's interpreter
				writePrefix(t, other, "3.11")
				k := filepath.Join(other, "share", "jupyter", "kernels", "python3")
				writeFile(t, k, "kernel.json", `{"argv": ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "Python 3 (ipykernel)", "language": "python"}`)
				return other, filepath.Join(k, "kernel.json")
			}},
		},
		"system": {
			{setup: func(t *testing.T, _, other string) (string, string) {
				p := filepath.Join(other, "usr")
				writePrefix(t, p, "3.11")
				return p, "the system's interpreter"
			}},
		},
		"apps": {
			{setup: func(t *testing.T, home, other string) (string, string) {
				// Stability Matrix's library, wherever library.json puts it
				writeFile(t, home, ".config/StabilityMatrix/library.json", `{"LibraryPath": "`+filepath.ToSlash(filepath.Join(other, "SM"))+`"}`)
				p, err := pyenvtest.StabilityMatrix(filepath.Join(other, "SM"), "ComfyUI", false, pyenvtest.Spec{})
				must(t, err)
				return p, filepath.Join(home, ".config", "StabilityMatrix", "library.json") + " LibraryPath"
			}},
			{setup: func(t *testing.T, home, _ string) (string, string) {
				p, err := pyenvtest.Pinokio(filepath.Join(home, "pinokio"), "comfy.git", pyenvtest.Spec{})
				must(t, err)
				return p, "Pinokio's default " + filepath.Join(home, "pinokio")
			}},
			{vars: map[string]string{"INVOKEAI_ROOT": "OTHER/invoke"}, setup: func(t *testing.T, _, other string) (string, string) {
				p, err := pyenvtest.InvokeAI(filepath.Join(other, "invoke"), pyenvtest.Spec{})
				must(t, err)
				return p, "$INVOKEAI_ROOT"
			}},
		},
		"user-site": {
			{setup: func(t *testing.T, home, _ string) (string, string) {
				writeTorch(t, filepath.Join(home, ".local", "lib", "python3.11", "site-packages"), "2.5.1+cpu", "")
				return filepath.Join(home, ".local"), "the user base"
			}},
		},
	}
	for _, m := range managers.Managers() {
		if m.Places == nil {
			continue
		}
		fs, ok := cases[m.Name]
		if !ok {
			t.Errorf("%s has Places but no fixture in TestManagerDefaultPlaces", m.Name)
			continue
		}
		for i, fx := range fs {
			t.Run(m.Name+"/"+string(rune('a'+i)), func(t *testing.T) {
				base := t.TempDir()
				home, other := filepath.Join(base, "home"), filepath.Join(base, "other")
				must(t, os.MkdirAll(home, 0o755))
				vars := map[string]string{}
				for k, v := range fx.vars {
					vars[k] = replaceOther(v, other)
				}
				env, from := fx.setup(t, home, other)
				system := []string{}
				if m.Name == "system" {
					system = []string{env}
				}
				o := envsearch.Options{Home: home, Cwd: filepath.Join(base, "nocwd"), System: system, MaxDepth: 1,
					Getenv: func(k string) string { return vars[k] }}
				got := discover(context.Background(), o)
				want := envsearch.Found{Path: env, Via: m.Name, From: from}
				if !slices.Contains(got, want) {
					t.Errorf("Discover =\n%v\nwant among them %v", got, want)
				}
				if _, err := pyenv.InspectWith(env, noUser(home)); err != nil {
					t.Errorf("Inspect(%s): %v", env, err)
				}
			})
		}
	}
}

func replaceOther(v, other string) string {
	var out []string
	for _, p := range filepath.SplitList(v) {
		if rest, ok := cutPrefix(p, "OTHER/"); ok {
			p = filepath.Join(other, filepath.FromSlash(rest))
		}
		out = append(out, p)
	}
	return joinList(out)
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return s, false
}

func joinList(ps []string) string {
	s := ""
	for i, p := range ps {
		if i > 0 {
			s += string(os.PathListSeparator)
		}
		s += p
	}
	return s
}
