package managers

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/pelletier/go-toml/v2"
	"gopkg.in/yaml.v3"
)

// The managers' Project rules: which environment each tool uses for a
// project folder, computed as the tool computes it. Each returns false
// when the folder is not one of its projects.

// pyproject is the part of a pyproject.toml the rules read.
type pyproject struct {
	Project struct {
		Name string `toml:"name"`
	} `toml:"project"`
	BuildSystem struct {
		Backend string `toml:"build-backend"`
	} `toml:"build-system"`
	Tool map[string]any `toml:"tool"`
}

func readPyproject(dir string) (pyproject, bool) {
	var p pyproject
	data, err := readSmall(filepath.Join(dir, "pyproject.toml"), smallFileLimit)
	if err != nil {
		return p, false
	}
	return p, toml.Unmarshal(data, &p) == nil
}

// tool returns the [tool.NAME] table, or nil.
func (p pyproject) tool(name string) map[string]any {
	t, _ := p.Tool[name].(map[string]any)
	return t
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// realDir is dir with links resolved, as the tools hash it.
func realDir(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return dir
}

// found is a project's environment at path, or its absence.
func found(path, rule, create string) Resolution {
	if isDir(path) && pyenv.IsEnv(path) {
		return Resolution{Env: path, Rule: rule}
	}
	return Resolution{Rule: rule, Create: create}
}

// uvProject: a folder with uv.lock, a [tool.uv] table or a .venv uv made;
// uv syncs the project into UV_PROJECT_ENVIRONMENT (relative to the
// project) or .venv (uv docs: Project environments).
func uvProject(dir string, w Where) (Resolution, bool) {
	p, hasPyproject := readPyproject(dir)
	uvVenv := false
	if data, err := readSmall(filepath.Join(dir, ".venv", "pyvenv.cfg"), smallFileLimit); err == nil {
		uvVenv = pyenv.ParsePyvenvCfg(data)["uv"] != ""
	}
	if !exists(filepath.Join(dir, "uv.lock")) && p.tool("uv") == nil && !(hasPyproject && uvVenv) {
		return Resolution{}, false
	}
	if v := w.env("UV_PROJECT_ENVIRONMENT"); v != "" {
		env := w.expand(v)
		if !filepath.IsAbs(env) {
			env = filepath.Join(dir, env)
		}
		return found(env, "uv project, UV_PROJECT_ENVIRONMENT", "uv sync"), true
	}
	return found(filepath.Join(dir, ".venv"), "uv project", "uv sync"), true
}

// poetryProject: a folder with poetry.lock, a [tool.poetry] table or
// Poetry's build backend. Poetry (src/poetry/utils/env/env_manager.py,
// EnvManager.get) uses the in-project .venv when virtualenvs.in-project
// says so or, unset, when .venv exists; else VIRTUALENVS/NAME-pyX.Y with
// NAME from generate_env_name and X.Y from envs.toml (or the Python it
// finds: here, the env of that name that exists).
func poetryProject(dir string, w Where) (Resolution, bool) {
	p, _ := readPyproject(dir)
	tp := p.tool("poetry")
	if !exists(filepath.Join(dir, "poetry.lock")) && tp == nil && !strings.HasPrefix(p.BuildSystem.Backend, "poetry.") {
		return Resolution{}, false
	}
	var local poetryConfig // the project's poetry.toml overrides the user's config
	readTOML(filepath.Join(dir, "poetry.toml"), &local)
	var global poetryConfig
	d := platformToolDirs(w)
	cfgDir := d.poetryConfig
	if v := w.env("POETRY_CONFIG_DIR"); v != "" {
		cfgDir = w.expand(v)
	}
	if cfgDir != "" {
		readTOML(filepath.Join(cfgDir, "config.toml"), &global)
	}
	inProject := global.Virtualenvs.InProject
	if local.Virtualenvs.InProject != nil {
		inProject = local.Virtualenvs.InProject
	}
	if v := strings.ToLower(w.env("POETRY_VIRTUALENVS_IN_PROJECT")); v != "" {
		b := v == "true" || v == "1"
		inProject = &b
	}
	dotVenv := filepath.Join(dir, ".venv")
	if inProject != nil && *inProject || inProject == nil && isDir(dotVenv) {
		return found(dotVenv, "Poetry project, in-project .venv", "poetry install"), true
	}
	venvs, _ := poetryVirtualenvs(w)
	if local.Virtualenvs.Path != "" {
		venvs = w.expand(local.Virtualenvs.Path)
	}
	name := tp["name"]
	if s, _ := name.(string); s == "" {
		name = p.Project.Name
	}
	s, _ := name.(string)
	if s == "" {
		s = filepath.Base(dir)
	}
	base := PoetryEnvName(canonicalName(s), realDir(dir))
	rule := "Poetry project, " + filepath.Join(venvs, base+"-pyX.Y")
	if venvs == "" {
		return Resolution{Rule: rule, Create: "poetry install"}, true
	}
	var envs map[string]struct {
		Minor string `toml:"minor"`
	}
	if readTOML(filepath.Join(venvs, "envs.toml"), &envs) {
		if e, ok := envs[base]; ok && e.Minor != "" {
			return found(filepath.Join(venvs, base+"-py"+e.Minor), "Poetry project, envs.toml", "poetry install"), true
		}
	}
	m, _ := filepath.Glob(filepath.Join(venvs, globEscape(base)+"-py*"))
	slices.SortFunc(m, func(a, b string) int {
		return pyenv.CompareXY(a[strings.LastIndex(a, "-py")+3:], b[strings.LastIndex(b, "-py")+3:])
	})
	for i := len(m) - 1; i >= 0; i-- {
		if pyenv.IsEnv(m[i]) {
			return Resolution{Env: m[i], Rule: "Poetry project, " + filepath.Base(m[i]) + " in " + venvs}, true
		}
	}
	return Resolution{Rule: rule, Create: "poetry install"}, true
}

// globEscape quotes glob metacharacters in a literal name.
func globEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`)
	if filepath.Separator == '\\' {
		return s // filepath.Match has no escapes on Windows
	}
	return r.Replace(s)
}

// canonicalName is a project name as poetry-core's canonicalize_name
// (packaging's) makes it: lowercase, runs of - _ . as one -.
func canonicalName(name string) string {
	var b strings.Builder
	sep := false
	for _, c := range strings.ToLower(name) {
		if c == '-' || c == '_' || c == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteRune(c)
	}
	return b.String()
}

// PoetryEnvName is Poetry's EnvManager.generate_env_name: the lowercased
// name with ` $`!*@"\` and CR, LF, TAB as "_", cut to 42 characters,
// then "-" and the first 8 characters of the URL-safe base64 of the
// SHA-256 of the project folder (realpath, os.path.normcase'd).
func PoetryEnvName(name, dir string) string {
	name = strings.ToLower(name)
	var b strings.Builder
	for _, c := range name {
		if strings.ContainsRune(" $`!*@\"\\\r\n\t", c) {
			c = '_'
		}
		b.WriteRune(c)
	}
	sanitized := cutRunes(b.String(), 42)
	sum := sha256.Sum256([]byte(normcase(dir)))
	return sanitized + "-" + base64.URLEncoding.EncodeToString(sum[:])[:8]
}

// cutRunes keeps the first n characters (Python's s[:n]).
func cutRunes(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		r = r[:n]
	}
	return string(r)
}

// PipenvEnvName is pipenv's Project.virtualenv_name (pipenv/project.py):
// the project folder's name with ` &$`!*@"()[]\` and CR, LF, TAB as "_",
// cut to 42 characters, then "-" and the URL-safe base64 of the first 6
// bytes of the SHA-256 of the Pipfile's path (resolved).
func PipenvEnvName(dir string) string {
	var b strings.Builder
	for _, c := range filepath.Base(dir) {
		if strings.ContainsRune(" &$`!*@\"()[]\\\r\n\t", c) {
			c = '_'
		}
		b.WriteRune(c)
	}
	sum := sha256.Sum256([]byte(filepath.Join(dir, "Pipfile")))
	return cutRunes(b.String(), 42) + "-" + base64.URLEncoding.EncodeToString(sum[:6])[:8]
}

// pipenvProject: a folder with a Pipfile. pipenv
// (Project.get_location_for_virtualenv) uses .venv when it is a folder,
// or when PIPENV_VENV_IN_PROJECT is set; a .venv file names the env (a
// path, or a name in WORKON_HOME); else WORKON_HOME/
// PIPENV_CUSTOM_VENV_NAME or the hashed name.
func pipenvProject(dir string, w Where) (Resolution, bool) {
	if !exists(filepath.Join(dir, "Pipfile")) {
		return Resolution{}, false
	}
	const create = "pipenv install"
	dotVenv := filepath.Join(dir, ".venv")
	inProject := strings.ToLower(w.env("PIPENV_VENV_IN_PROJECT"))
	if isDir(dotVenv) && inProject != "0" && inProject != "false" || inProject == "1" || inProject == "true" {
		return found(dotVenv, "pipenv project, in-project .venv", create), true
	}
	workon := ""
	if places := pipenvPlaces(w); len(places) > 0 {
		workon = places[0].Path
	}
	if data, err := readSmall(dotVenv, smallFileLimit); err == nil {
		if name := strings.TrimSpace(string(data)); name != "" {
			if strings.ContainsAny(name, `/\`) {
				return found(filepath.Join(dir, name), "pipenv project, .venv file", create), true
			}
			return found(filepath.Join(workon, name), "pipenv project, .venv file", create), true
		}
	}
	if workon == "" {
		return Resolution{Rule: "pipenv project", Create: create}, true
	}
	name := w.env("PIPENV_CUSTOM_VENV_NAME")
	if name == "" {
		name = PipenvEnvName(realDir(dir))
	}
	return found(filepath.Join(workon, name), "pipenv project, "+filepath.Join(workon, name), create), true
}

// pdmProject: a folder with pdm.lock, .pdm-python or a [tool.pdm] table.
// PDM uses the interpreter .pdm-python names (pdm/project/core.py), else
// the in-project .venv (venv.in_project, default true), else its venvs
// named DIR-HASH-PYTHON (pdm/cli/commands/venv/utils.py get_venv_prefix:
// HASH is URL-safe base64 of the MD5 of the folder's path, 8 characters).
func pdmProject(dir string, w Where) (Resolution, bool) {
	p, _ := readPyproject(dir)
	pin := filepath.Join(dir, ".pdm-python")
	if !exists(filepath.Join(dir, "pdm.lock")) && !exists(pin) && p.tool("pdm") == nil {
		return Resolution{}, false
	}
	const create = "pdm install"
	if data, err := readSmall(pin, smallFileLimit); err == nil {
		if exe := strings.TrimSpace(string(data)); exe != "" {
			if env, ok := pyenv.EnvOfInterpreter(exe); ok {
				return Resolution{Env: env, Rule: "PDM project, .pdm-python"}, true
			}
		}
	}
	if dotVenv := filepath.Join(dir, ".venv"); isDir(dotVenv) {
		return found(dotVenv, "PDM project, in-project .venv", create), true
	}
	for _, pl := range pdmPlaces(w) {
		sum := md5.Sum([]byte(filepath.ToSlash(dir)))
		prefix := filepath.Base(dir) + "-" + base64.URLEncoding.EncodeToString(sum[:])[:8] + "-"
		m, _ := filepath.Glob(filepath.Join(pl.Path, globEscape(prefix)+"*"))
		slices.Sort(m)
		for i := len(m) - 1; i >= 0; i-- {
			if pyenv.IsEnv(m[i]) {
				return Resolution{Env: m[i], Rule: "PDM project, " + pl.Path}, true
			}
		}
	}
	return Resolution{Rule: "PDM project", Create: create}, true
}

// hatchProject: a folder with hatch.toml or a [tool.hatch.envs] table.
// hatch's default environment (hatch/env/virtual.py) is the env's own
// path option when set, else VIRTUAL/NAME/ID/NAME, NAME the normalized
// project name and ID the first 8 characters of the URL-safe base64 of
// the SHA-256 of the project's path (hatch/utils/fs.py Path.id).
func hatchProject(dir string, w Where) (Resolution, bool) {
	p, _ := readPyproject(dir)
	th := p.tool("hatch")
	envs, _ := th["envs"].(map[string]any)
	var hatchToml struct {
		Envs map[string]any `toml:"envs"`
	}
	hasToml := readTOML(filepath.Join(dir, "hatch.toml"), &hatchToml)
	if !hasToml && envs == nil {
		return Resolution{}, false
	}
	if hasToml && hatchToml.Envs != nil {
		envs = hatchToml.Envs
	}
	const create = "hatch env create"
	def, _ := envs["default"].(map[string]any)
	if path := str(def, "path"); path != "" {
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		return found(path, "hatch project, envs.default.path", create), true
	}
	id := hatchID(dir)
	name := canonicalName(p.Project.Name)
	if p.Project.Name == "" {
		name = id + "-unmanaged"
	}
	for _, pl := range hatchPlaces(w) {
		if pl.Depth != 3 {
			continue
		}
		env := filepath.Join(pl.Path, name, id, name)
		if pyenv.IsEnv(env) {
			return Resolution{Env: env, Rule: "hatch project, default environment"}, true
		}
	}
	return Resolution{Rule: "hatch project, default environment", Create: create}, true
}

// hatchID is hatch's Path.id of a project folder.
func hatchID(dir string) string {
	sum := sha256.Sum256([]byte(casefold(dir)))
	return base64.URLEncoding.EncodeToString(sum[:])[:8]
}

// condaProject: a folder with environment.yml (or .yaml) whose name (or
// prefix) names a conda env, looked for in conda's places.
func condaProject(dir string, w Where) (Resolution, bool) {
	var spec struct {
		Name   string `yaml:"name"`
		Prefix string `yaml:"prefix"`
	}
	file := ""
	for _, f := range []string{"environment.yml", "environment.yaml"} {
		if data, err := readSmall(filepath.Join(dir, f), smallFileLimit); err == nil && yaml.Unmarshal(data, &spec) == nil {
			file = f
			break
		}
	}
	if file == "" || spec.Name == "" && spec.Prefix == "" {
		return Resolution{}, false
	}
	create := "conda env create -f " + file
	if spec.Prefix != "" {
		return found(w.expand(spec.Prefix), "conda "+file+", prefix", create), true
	}
	for _, pl := range condaPlaces(w) {
		var path string
		switch {
		case pl.Holds == HoldsEnvs:
			path = filepath.Join(pl.Path, spec.Name)
		case pl.Holds == HoldsList:
			for _, c := range EnvList(pl.Path) {
				if filepath.Base(c) == spec.Name {
					path = c
				}
			}
		case pl.Holds == HoldsEnv && spec.Name == "base":
			path = pl.Path
		}
		if path != "" && isDir(path) && pyenv.IsEnv(path) {
			return Resolution{Env: path, Rule: "conda " + file + ", name: " + spec.Name}, true
		}
	}
	return Resolution{Rule: "conda " + file + ", name: " + spec.Name, Create: create}, true
}

// pyenvProject: a .python-version naming one of pyenv's versions or
// pyenv-virtualenv's envs (`pyenv local NAME` writes it).
func pyenvProject(dir string, w Where) (Resolution, bool) {
	data, err := readSmall(filepath.Join(dir, ".python-version"), smallFileLimit)
	if err != nil {
		return Resolution{}, false
	}
	name := strings.TrimSpace(strings.SplitN(string(data), "\n", 2)[0])
	if name == "" || strings.ContainsAny(name, `/\`) || name == "system" {
		return Resolution{}, false
	}
	for _, pl := range pyenvPlaces(w) {
		if env := filepath.Join(pl.Path, name); pyenv.IsEnv(env) {
			return Resolution{Env: env, Rule: "pyenv, .python-version"}, true
		}
	}
	return Resolution{}, false
}

// venvNames are the folder names people give a project's venv, most
// common first.
var venvNames = []string{".venv", "venv", "env", ".env", "virtualenv"}

// VenvNames are venvNames, for the search's walk, which looks in the
// folders so named first.
func VenvNames() []string { return slices.Clone(venvNames) }

// venvProject: a venv inside the folder (python -m venv .venv), or a
// Python project with none yet.
func venvProject(dir string, _ Where) (Resolution, bool) {
	for _, n := range venvNames {
		if p := filepath.Join(dir, n); isDir(p) && pyenv.IsEnv(p) {
			return Resolution{Env: p, Rule: "a venv in the project"}, true
		}
	}
	for _, f := range []string{"pyproject.toml", "requirements.txt", "setup.py", "setup.cfg"} {
		if exists(filepath.Join(dir, f)) {
			return Resolution{Rule: "a Python project (" + f + ") with no venv", Create: "python3 -m venv .venv"}, true
		}
	}
	return Resolution{}, false
}
