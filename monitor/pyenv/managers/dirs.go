package managers

import "path/filepath"

// toolDirs are the default folders of each tool on this platform, as the
// tool itself computes them (most through platformdirs; uv through its
// own etcetera rules). dirs_linux.go and dirs_windows.go fill them; the
// managers' Places read them after the tools' own variables and config.
type toolDirs struct {
	poetryConfig string // Poetry's config folder (config.toml): platformdirs user_config_path("pypoetry", appauthor=False, roaming=True)
	poetryCache  string // Poetry's cache-dir default: user_cache_path("pypoetry", appauthor=False); virtualenvs/ is inside
	pipenvWorkon string // pipenv's WORKON_HOME default (pipenv/utils/shell.py get_workon_home)
	workonHome   string // virtualenvwrapper's WORKON_HOME default: ~/.virtualenvs
	hatchConfig  string // hatch's config.toml: user_config_dir("hatch", appauthor=False)/config.toml
	hatchData    string // hatch's data dir: user_data_dir("hatch", appauthor=False)
	pdmConfig    string // PDM's global config.toml: user_config_path("pdm")/config.toml
	pdmData      string // PDM's data dir: user_data_dir("pdm"); venvs/ is venv.location's default
	uvTools      string // uv's tool envs: $XDG_DATA_HOME/uv/tools, %APPDATA%\uv\data\tools
	uvPython     string // uv's managed interpreters: .../uv/python
	pipxHomes    []string
	pyenvRoot    string   // pyenv's PYENV_ROOT default (pyenv-win: ~\.pyenv\pyenv-win)
	jupyterData  string   // Jupyter's user data dir (jupyter_core.paths.jupyter_data_dir)
	jupyterSys   []string // Jupyter's system data dirs (SYSTEM_JUPYTER_PATH)
	condarcs     []string // conda's config files in its search order (conda/base/constants.py SEARCH_PATH), lowest priority first
	condaSystem  []string // system-wide conda installs: /opt/conda (the official Docker images)
	interpreters []string // the system's interpreter prefixes: /usr, /usr/local; C:\Python311 and the python.org installs
}

// xdg is the XDG base directories of the freedesktop.org spec, as
// platformdirs and uv read them on Linux (and other Unix).
type xdg struct{ data, config, cache string }

func xdgDirs(w Where) xdg {
	pick := func(v, def string) string {
		if p := w.env(v); p != "" && filepath.IsAbs(p) {
			return p
		}
		if w.Home == "" {
			return ""
		}
		return filepath.Join(w.Home, def)
	}
	return xdg{
		data:   pick("XDG_DATA_HOME", filepath.Join(".local", "share")),
		config: pick("XDG_CONFIG_HOME", ".config"),
		cache:  pick("XDG_CACHE_HOME", ".cache"),
	}
}

// unixToolDirs are the tools' defaults on Linux and other Unix.
func unixToolDirs(w Where) toolDirs {
	x := xdgDirs(w)
	join := func(base string, parts ...string) string {
		if base == "" {
			return ""
		}
		return filepath.Join(append([]string{base}, parts...)...)
	}
	home := func(parts ...string) string { return join(w.Home, parts...) }
	return toolDirs{
		poetryConfig: join(x.config, "pypoetry"),
		poetryCache:  join(x.cache, "pypoetry"),
		pipenvWorkon: join(x.data, "virtualenvs"),
		workonHome:   home(".virtualenvs"),
		hatchConfig:  join(x.config, "hatch", "config.toml"),
		hatchData:    join(x.data, "hatch"),
		pdmConfig:    join(x.config, "pdm", "config.toml"),
		pdmData:      join(x.data, "pdm"),
		uvTools:      join(x.data, "uv", "tools"),
		uvPython:     join(x.data, "uv", "python"),
		// pipx 1.3+: ~/.local/pipx while it exists (the old default), else
		// platformdirs user_data_path("pipx") (pipx/paths.py).
		pipxHomes:   []string{home(".local", "pipx"), join(x.data, "pipx")},
		pyenvRoot:   home(".pyenv"),
		jupyterData: join(x.data, "jupyter"),
		jupyterSys:  []string{"/usr/local/share/jupyter", "/usr/share/jupyter"},
		condarcs: []string{"/etc/conda/.condarc", "/etc/conda/condarc", "/var/lib/conda/.condarc", "/var/lib/conda/condarc",
			join(x.config, "conda", ".condarc"), join(x.config, "conda", "condarc"),
			home(".conda", ".condarc"), home(".conda", "condarc"), home(".condarc"), home(".mambarc")},
		condaSystem:  []string{"/opt/conda", "/opt/miniconda3", "/opt/anaconda3", "/opt/miniforge3"},
		interpreters: []string{"/usr", "/usr/local"},
	}
}
