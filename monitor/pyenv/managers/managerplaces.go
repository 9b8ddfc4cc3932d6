package managers

import (
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/pelletier/go-toml/v2"
	"gopkg.in/yaml.v3"
)

// Each manager's Places reads the tool's own settings the way the tool
// does: its environment variables first, then its config file, then its
// default folder (toolDirs). The sources are cited beside each.

// named describes a default folder for Place.From.
func named(tool, path string) string { return tool + "'s default " + path }

// venvwrapperPlaces: virtualenvwrapper keeps every env in $WORKON_HOME,
// default ~/.virtualenvs (virtualenvwrapper.sh).
func venvwrapperPlaces(w Where) []Place {
	if p := w.env("WORKON_HOME"); p != "" {
		return []Place{{Path: w.expand(p), Holds: HoldsEnvs, From: "$WORKON_HOME"}}
	}
	d := platformToolDirs(w)
	if d.workonHome == "" {
		return nil
	}
	return []Place{{Path: d.workonHome, Holds: HoldsEnvs, From: named("virtualenvwrapper", d.workonHome)}}
}

// pipenvPlaces: pipenv keeps its project envs in $WORKON_HOME, default
// $XDG_DATA_HOME/virtualenvs (~/.virtualenvs on Windows)
// (pipenv/utils/shell.py get_workon_home). PIPENV_VENV_IN_PROJECT envs
// are the project's .venv, found with the project.
func pipenvPlaces(w Where) []Place {
	if p := w.env("WORKON_HOME"); p != "" {
		return []Place{{Path: w.expand(p), Holds: HoldsEnvs, From: "$WORKON_HOME"}}
	}
	d := platformToolDirs(w)
	if d.pipenvWorkon == "" {
		return nil
	}
	return []Place{{Path: d.pipenvWorkon, Holds: HoldsEnvs, From: named("pipenv", d.pipenvWorkon)}}
}

// poetryConfig is what Poetry's config.toml says about environments.
type poetryConfig struct {
	CacheDir    string `toml:"cache-dir"`
	Virtualenvs struct {
		Path      string `toml:"path"`
		InProject *bool  `toml:"in-project"`
	} `toml:"virtualenvs"`
}

// readTOML decodes a small TOML file into v; a missing or broken file
// leaves v as it was and says so.
func readTOML(path string, v any) bool {
	if path == "" {
		return false
	}
	data, err := readSmall(path, smallFileLimit)
	if err != nil {
		return false
	}
	return toml.Unmarshal(data, v) == nil
}

// poetryVirtualenvs is Poetry's virtualenvs.path, read as
// poetry/config/config.py does: POETRY_VIRTUALENVS_PATH, else
// config.toml's virtualenvs.path (in POETRY_CONFIG_DIR or the config
// folder; "{cache-dir}" stands for the cache dir), else
// CACHE_DIR/virtualenvs, where the cache dir is POETRY_CACHE_DIR, else
// config.toml's cache-dir, else Poetry's default.
func poetryVirtualenvs(w Where) (path, from string) {
	d := platformToolDirs(w)
	cfgDir := d.poetryConfig
	if v := w.env("POETRY_CONFIG_DIR"); v != "" {
		cfgDir = w.expand(v)
	}
	var cfg poetryConfig
	cfgFile := ""
	if cfgDir != "" {
		cfgFile = filepath.Join(cfgDir, "config.toml")
		readTOML(cfgFile, &cfg)
	}
	cache, cacheFrom := d.poetryCache, named("Poetry", d.poetryCache)
	switch {
	case w.env("POETRY_CACHE_DIR") != "":
		cache, cacheFrom = w.expand(w.env("POETRY_CACHE_DIR")), "$POETRY_CACHE_DIR"
	case cfg.CacheDir != "":
		cache, cacheFrom = w.expand(cfg.CacheDir), cfgFile+" cache-dir"
	}
	switch {
	case w.env("POETRY_VIRTUALENVS_PATH") != "":
		return w.expand(strings.ReplaceAll(w.env("POETRY_VIRTUALENVS_PATH"), "{cache-dir}", cache)), "$POETRY_VIRTUALENVS_PATH"
	case cfg.Virtualenvs.Path != "":
		return w.expand(strings.ReplaceAll(cfg.Virtualenvs.Path, "{cache-dir}", cache)), cfgFile + " virtualenvs.path"
	case cache != "":
		return filepath.Join(cache, "virtualenvs"), cacheFrom + "/virtualenvs"
	}
	return "", ""
}

// poetryPlaces: Poetry's virtualenvs folder holds NAME-HASH-pyX.Y envs.
func poetryPlaces(w Where) []Place {
	p, from := poetryVirtualenvs(w)
	if p == "" {
		return nil
	}
	return []Place{{Path: p, Holds: HoldsEnvs, From: from}}
}

// hatchConfig is what hatch's config.toml says about its folders.
type hatchConfig struct {
	Dirs struct {
		Data string            `toml:"data"`
		Env  map[string]string `toml:"env"`
	} `toml:"dirs"`
}

// hatchPlaces: hatch keeps a project's virtual envs at
// DATA/env/virtual/PROJECT/ID/ENV (hatch/env/virtual.py; ID is hashed
// from the project's path) unless dirs.env.virtual names another folder,
// and its own Pythons at DATA/pythons. DATA is HATCH_DATA_DIR, else the
// config's dirs.data, else hatch's default (hatch/cli/__init__.py,
// hatch/config/model.py); the config is HATCH_CONFIG or its default.
func hatchPlaces(w Where) []Place {
	d := platformToolDirs(w)
	cfgFile := d.hatchConfig
	if v := w.env("HATCH_CONFIG"); v != "" {
		cfgFile = w.expand(v)
	}
	var cfg hatchConfig
	readTOML(cfgFile, &cfg)
	data, from := d.hatchData, named("hatch", d.hatchData)
	switch {
	case w.env("HATCH_DATA_DIR") != "":
		data, from = w.expand(w.env("HATCH_DATA_DIR")), "$HATCH_DATA_DIR"
	case cfg.Dirs.Data != "":
		data, from = w.expand(cfg.Dirs.Data), cfgFile+" dirs.data"
	}
	var out []Place
	if v := cfg.Dirs.Env["virtual"]; v != "" && filepath.IsAbs(w.expand(v)) {
		out = append(out, Place{Path: w.expand(v), Holds: HoldsEnvs, Depth: 3, From: cfgFile + " dirs.env.virtual"})
	}
	if data == "" {
		return out
	}
	return append(out,
		Place{Path: filepath.Join(data, "env", "virtual"), Holds: HoldsEnvs, Depth: 3, From: from},
		Place{Path: filepath.Join(data, "pythons"), Holds: HoldsEnvs, Depth: 2, From: from})
}

// pdmConfig is what PDM's global config.toml says about venvs.
type pdmConfig struct {
	Venv struct {
		Location string `toml:"location"`
	} `toml:"venv"`
}

// pdmPlaces: PDM keeps centrally created venvs in venv.location, read
// from the global config (PDM_CONFIG_FILE or its default), default
// DATA/venvs (pdm/project/config.py); in-project .venv envs are found
// with the project.
func pdmPlaces(w Where) []Place {
	d := platformToolDirs(w)
	cfgFile := d.pdmConfig
	if v := w.env("PDM_CONFIG_FILE"); v != "" {
		cfgFile = w.expand(v)
	}
	var cfg pdmConfig
	if readTOML(cfgFile, &cfg) && cfg.Venv.Location != "" {
		return []Place{{Path: w.expand(cfg.Venv.Location), Holds: HoldsEnvs, From: cfgFile + " venv.location"}}
	}
	if d.pdmData == "" {
		return nil
	}
	p := filepath.Join(d.pdmData, "venvs")
	return []Place{{Path: p, Holds: HoldsEnvs, From: named("PDM", p)}}
}

// uvPlaces: uv's tool envs (UV_TOOL_DIR, default DATA/uv/tools) and the
// Pythons it installs (UV_PYTHON_INSTALL_DIR, default DATA/uv/python),
// per uv's docs (Storage). Project envs are the project's .venv or
// UV_PROJECT_ENVIRONMENT, found with the project.
func uvPlaces(w Where) []Place {
	d := platformToolDirs(w)
	var out []Place
	for _, c := range []struct{ env, def string }{{"UV_TOOL_DIR", d.uvTools}, {"UV_PYTHON_INSTALL_DIR", d.uvPython}} {
		switch {
		case w.env(c.env) != "":
			out = append(out, Place{Path: w.expand(w.env(c.env)), Holds: HoldsEnvs, From: "$" + c.env})
		case c.def != "":
			out = append(out, Place{Path: c.def, Holds: HoldsEnvs, From: named("uv", c.def)})
		}
	}
	return out
}

// pyenvPlaces: pyenv's interpreters are PYENV_ROOT/versions/* (default
// ~/.pyenv); pyenv-virtualenv's envs are versions/X.Y.Z/envs/NAME, linked
// as versions/NAME (envsUnder enters envs/).
func pyenvPlaces(w Where) []Place {
	root, from := platformToolDirs(w).pyenvRoot, ""
	from = named("pyenv", root)
	if v := w.env("PYENV_ROOT"); v != "" {
		root, from = w.expand(v), "$PYENV_ROOT"
	}
	if root == "" {
		return nil
	}
	return []Place{{Path: filepath.Join(root, "versions"), Holds: HoldsEnvs, From: from}}
}

// pipxPlaces: pipx keeps one venv per app in PIPX_HOME/venvs; PIPX_HOME
// defaults to the old ~/.local/pipx while it exists, else platformdirs'
// data folder (pipx/paths.py).
func pipxPlaces(w Where) []Place {
	if v := w.env("PIPX_HOME"); v != "" {
		return []Place{{Path: filepath.Join(w.expand(v), "venvs"), Holds: HoldsEnvs, From: "$PIPX_HOME"}}
	}
	homes := platformToolDirs(w).pipxHomes
	for _, h := range homes {
		if h != "" && isDir(h) {
			return []Place{{Path: filepath.Join(h, "venvs"), Holds: HoldsEnvs, From: named("pipx", h)}}
		}
	}
	if len(homes) > 0 && homes[len(homes)-1] != "" {
		h := homes[len(homes)-1]
		return []Place{{Path: filepath.Join(h, "venvs"), Holds: HoldsEnvs, From: named("pipx", h)}}
	}
	return nil
}

// jupyterPlaces: every kernels/ folder Jupyter reads kernel specs from,
// in jupyter_core.paths.jupyter_path's order: JUPYTER_DATA_DIR (default
// the user data dir), the JUPYTER_PATH entries, then the system folders.
func jupyterPlaces(w Where) []Place {
	d := platformToolDirs(w)
	var out []Place
	add := func(dir, from string) {
		if dir != "" {
			out = append(out, Place{Path: filepath.Join(dir, "kernels"), Holds: HoldsKernels, From: from})
		}
	}
	if v := w.env("JUPYTER_DATA_DIR"); v != "" {
		add(w.expand(v), "$JUPYTER_DATA_DIR")
	} else {
		add(d.jupyterData, named("Jupyter", d.jupyterData))
	}
	for _, p := range filepath.SplitList(w.env("JUPYTER_PATH")) {
		if p != "" {
			add(w.expand(p), "$JUPYTER_PATH")
		}
	}
	for _, p := range systemOr(w, d.jupyterSys, "share/jupyter") {
		add(p, "Jupyter's system folder "+p)
	}
	return out
}

// systemOr is the platform's system-wide folders, or, when the search
// names its own (Where.System), those of them that end in suffix (a
// test's fake /usr/share/jupyter) or, for suffix "", all of them.
func systemOr(w Where, platform []string, suffix string) []string {
	if w.System == nil {
		return platform
	}
	var out []string
	for _, s := range w.System {
		if suffix == "" || strings.HasSuffix(filepath.ToSlash(s), suffix) {
			out = append(out, s)
		}
	}
	return out
}

// systemPlaces: the interpreters installed for the whole machine
// (/usr, /usr/local; python.org's installs on Windows): `python3` runs
// one of them.
func systemPlaces(w Where) []Place {
	var out []Place
	for _, p := range systemOr(w, platformToolDirs(w).interpreters, "") {
		if strings.HasSuffix(filepath.ToSlash(p), "share/jupyter") {
			continue
		}
		out = append(out, Place{Path: p, Holds: HoldsEnv, From: "the system's interpreter"})
	}
	return out
}

// userSitePlaces: the user base (~/.local, %APPDATA%\Python, or
// PYTHONUSERBASE), whose user site `pip install --user` fills.
func userSitePlaces(w Where) []Place {
	from := "the user base"
	if w.env("PYTHONUSERBASE") != "" {
		from = "$PYTHONUSERBASE"
	}
	var out []Place
	for _, b := range pyenv.UserSiteBases(pyenv.InspectOptions{Home: w.Home, Getenv: w.Getenv}) {
		out = append(out, Place{Path: b, Holds: HoldsEnv, From: from})
	}
	return out
}

// condaHomes are the folders under home where conda, mamba and their
// installers put the base environment (with envs/ inside).
var condaHomes = []string{
	"miniconda3", "anaconda3", "miniforge3", "mambaforge", "micromamba", "miniconda", "anaconda",
	".conda", ".mamba", filepath.Join("opt", "miniconda3"), filepath.Join("opt", "anaconda3"),
	filepath.Join(".local", "share", "mamba"),
}

// condarc is what a .condarc says about where environments live.
type condarc struct {
	EnvsDirs []string `yaml:"envs_dirs"`
}

// condaPlaces reads conda's places the way conda's context does
// (conda/base/context.py envs_dirs): CONDA_ENVS_PATH (or CONDA_ENVS_DIRS),
// then envs_dirs from every .condarc in conda's search path (CONDARC
// last), then the base installs: CONDA_EXE's and MAMBA_ROOT_PREFIX's,
// the usual folders under home and the system-wide ones, each with its
// envs/; then ~/.conda/envs and the environments conda lists in
// ~/.conda/environments.txt (conda's envs_manager registers every
// environment it creates there, one prefix a line).
func condaPlaces(w Where) []Place {
	var out []Place
	for _, v := range []string{"CONDA_ENVS_PATH", "CONDA_ENVS_DIRS"} {
		for _, p := range filepath.SplitList(w.env(v)) {
			if p != "" {
				out = append(out, Place{Path: w.expand(p), Holds: HoldsEnvs, From: "$" + v})
			}
		}
	}
	d := platformToolDirs(w)
	rcs := append([]string{}, d.condarcs...)
	if v := w.env("CONDARC"); v != "" {
		rcs = append(rcs, w.expand(v))
	}
	for _, rc := range rcs {
		if rc == "" {
			continue
		}
		data, err := readSmall(rc, smallFileLimit)
		if err != nil {
			continue
		}
		var c condarc
		if yaml.Unmarshal(data, &c) != nil {
			continue
		}
		for _, p := range c.EnvsDirs {
			if p = w.expand(p); filepath.IsAbs(p) {
				out = append(out, Place{Path: p, Holds: HoldsEnvs, From: rc + " envs_dirs"})
			}
		}
	}
	base := func(p, from string) {
		out = append(out, Place{Path: p, Holds: HoldsEnv, From: from}, Place{Path: filepath.Join(p, "envs"), Holds: HoldsEnvs, From: from})
	}
	if exe := w.env("CONDA_EXE"); exe != "" && filepath.IsAbs(exe) {
		// CONDA_EXE is BASE/bin/conda (BASE\Scripts\conda.exe, BASE\condabin\conda.bat)
		base(filepath.Dir(filepath.Dir(exe)), "$CONDA_EXE")
	}
	if v := w.env("MAMBA_ROOT_PREFIX"); v != "" {
		base(w.expand(v), "$MAMBA_ROOT_PREFIX")
	}
	if w.Home != "" {
		for _, c := range condaHomes {
			p := filepath.Join(w.Home, c)
			base(p, "conda's usual folder "+p)
		}
	}
	for _, p := range systemOr(w, d.condaSystem, "conda") {
		base(p, "conda's usual folder "+p)
	}
	if w.Home != "" {
		out = append(out, Place{Path: filepath.Join(w.Home, ".conda", "environments.txt"), Holds: HoldsList, From: "~/.conda/environments.txt"})
	}
	return out
}
