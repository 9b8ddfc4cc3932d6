package managers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// platformToolDirs: Windows keeps per-user data in %LOCALAPPDATA% and
// roaming config in %APPDATA% (platformdirs' Windows rules: with an app
// author, APP\APP; caches in APP\Cache).
func platformToolDirs(w Where) toolDirs {
	join := func(base string, parts ...string) string {
		if base == "" {
			return ""
		}
		return filepath.Join(append([]string{base}, parts...)...)
	}
	local, roaming := w.env("LOCALAPPDATA"), w.env("APPDATA")
	if local == "" {
		local = join(w.Home, "AppData", "Local")
	}
	if roaming == "" {
		roaming = join(w.Home, "AppData", "Roaming")
	}
	d := toolDirs{
		poetryConfig: join(roaming, "pypoetry"),
		poetryCache:  join(local, "pypoetry", "Cache"),
		pipenvWorkon: join(w.Home, ".virtualenvs"),
		workonHome:   join(w.Home, "Envs"), // virtualenvwrapper-win's default
		hatchConfig:  join(local, "hatch", "config.toml"),
		hatchData:    join(local, "hatch"),
		pdmConfig:    join(local, "pdm", "pdm", "config.toml"),
		pdmData:      join(local, "pdm", "pdm"),
		uvTools:      join(roaming, "uv", "data", "tools"),
		uvPython:     join(roaming, "uv", "data", "python"),
		pipxHomes:    []string{join(w.Home, "pipx"), join(local, "pipx", "pipx")},
		pyenvRoot:    join(w.Home, ".pyenv", "pyenv-win"),
		jupyterData:  join(roaming, "jupyter"),
		condarcs: []string{join(w.env("ProgramData"), "conda", ".condarc"),
			join(w.Home, ".config", "conda", ".condarc"), join(w.Home, ".conda", ".condarc"), join(w.Home, ".condarc"), join(w.Home, ".mambarc")},
	}
	if pd := w.env("ProgramData"); pd != "" {
		d.jupyterSys = []string{join(pd, "jupyter")}
		d.condaSystem = []string{join(pd, "miniconda3"), join(pd, "anaconda3"), join(pd, "miniforge3")}
	}
	// python.org's installer: per user under %LOCALAPPDATA%\Programs\Python,
	// for all users under %ProgramFiles%; older ones at C:\PythonXY.
	drive := ""
	if sd := w.env("SystemDrive"); sd != "" {
		drive = sd + string(os.PathSeparator)
	}
	for _, pattern := range []string{join(local, "Programs", "Python", "Python3*"), join(w.env("ProgramFiles"), "Python3*"),
		join(drive, "Python3*")} {
		if pattern == "" {
			continue
		}
		m, _ := filepath.Glob(pattern)
		slices.Sort(m)
		d.interpreters = append(d.interpreters, m...)
	}
	return d
}

// normcase is Python's os.path.normcase on Windows: lowercase, / as \.
func normcase(p string) string { return strings.ToLower(strings.ReplaceAll(p, "/", `\`)) }

// casefold is how hatch keys a project's path on Windows: casefolded.
func casefold(p string) string { return strings.ToLower(p) }
