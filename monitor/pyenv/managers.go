package pyenv

import "slices"

// Manager is one environment manager as data: where its environments live,
// what on disk says an environment is its, which INSTALLER contents are
// its, which running programs are its installers, and how it reinstalls
// torch. The search (envsearch: Search, Options.Places, Resolve), Inspect,
// the culprit search (InstallerProgram) and the fix plan
// (ReinstallCommand) read the table and nothing else, so a new manager is
// one more entry in managers (and its tests), not an edit in each reader.
// The search sits above this package and reads the table (Managers); the
// entries' Places and Project are its data, written here beside the
// Marker and Reinstall that reading and repair use.
type Manager struct {
	// Name is the manager's word: Env.Installer holds it, envsearch.Found.Via names
	// it for environments found in its Places, and InstallerProgram
	// returns it.
	Name string
	// Kind is Env.Kind of the environments it makes: KindVenv or KindConda.
	Kind string
	// Active are the environment variables its activation sets to the
	// active environment; discovery reads them first, in table order.
	Active []string
	// Targets are the environment variables that aim one of its running
	// installers at an environment (the culprit search matches them).
	Targets []string
	// Places lists where its environments live, as its own config says
	// (its variables, then its config file, then its default); nil when
	// they live wherever their user made them (a venv).
	Places func(Where) []Place
	// Project, when set, says which environment the manager uses for a
	// project folder (uv: .venv or UV_PROJECT_ENVIRONMENT; Poetry: its
	// hashed env name), or that the project has none yet and how to
	// create it; false when the folder is not one of its projects.
	// envsearch.Resolve asks the managers in table order.
	Project func(dir string, w Where) (Resolution, bool)
	// Nested are folders inside one of its environments that hold more of
	// them: a conda base install keeps envs/.
	Nested []string
	// Marker is the entry at an environment's top that makes it one of
	// this manager's; empty for the managers whose environments are
	// plain venvs or prefixes, known by where they are (Poetry, pyenv).
	Marker Marker
	// ClaimsEnv is true when the marker alone names the manager: every
	// package in a uv venv or a conda env is installed with uv or conda.
	// A plain pyvenv.cfg does not: venv, virtualenv and the tools built on
	// them make the same one, and the INSTALLER files of the packages say
	// who installs into it.
	ClaimsEnv bool
	// Installed are the INSTALLER file contents (trimmed) that its
	// installs leave in a dist-info.
	Installed []string
	// Programs are the base names of the programs that install with it at
	// run time, as path.Match patterns ("pip*": pip, pip3, pip3.12);
	// Modules are its `python -m MODULE` names.
	Programs []string
	Modules  []string
	// Reinstall builds the command that reinstalls packages in one of its
	// environments in the request's InstallForm; nil leaves it to pip.
	Reinstall func(ReinstallRequest) Reinstall
	// Refuse, when set, says why packages it installed must not be
	// reinstalled by pip or uv, with the command that would do it right.
	Refuse func(ReinstallRequest) string
}

// Marker is the file or folder at an environment's top that says which
// manager made it.
type Marker struct {
	Name string // "pyvenv.cfg", "conda-meta"
	Dir  bool   // a folder (or a link to one), not a file
	// CfgKey, when set, is a key that pyvenv.cfg must hold: uv writes
	// "uv = 0.5.11", venv and virtualenv write none.
	CfgKey string
}

// Env.Kind values: the on-disk family of an environment.
const (
	KindVenv  = "venv"  // pyvenv.cfg: venv, virtualenv, uv
	KindConda = "conda" // conda-meta/: conda, mamba, micromamba
	// KindPrefix is an interpreter's own installation (sys.prefix with no
	// pyvenv.cfg): /usr, /usr/local, a pyenv version, a python.org or uv
	// install, or a user base (~/.local) holding a user site.
	KindPrefix = "prefix"
)

// managers is the table. The managers with a Marker are in ownership
// order, most specific marker first: the first manager whose marker an
// environment has owns it, so uv's pyvenv.cfg with a uv line comes before
// conda's conda-meta and, last of all, the plain pyvenv.cfg of venv and
// virtualenv (pip). The managers between them own no marker: their
// environments are venvs or interpreter prefixes known by where they are
// (Places) and by the projects they serve (Project). envsearch.Resolve asks the
// Project rules in this order too, so a project's own tool answers
// before the venv-in-the-folder fallback (pip's, last).
//
// Sources: pyvenv.cfg keys are written by CPython's venv (home, version,
// include-system-site-packages), virtualenv (version_info) and uv (uv,
// version_info); conda-meta/ and envs/ are conda's layout, shared by mamba
// and micromamba; INSTALLER is PEP 376/the wheel spec's record of the
// installing tool ("pip", "uv", "conda"). Each Places and Project function
// cites the tool source it follows (managerplaces.go, projects.go).
var managers []Manager

// envMarkers are the distinct marker entries (name and type), in table
// order: what makes a folder an environment at all.
var envMarkers []Marker

// The table is built in init: its Project rules read the table back
// (IsEnv's markers), which a package-level initializer may not.
func init() {
	managers = table()
	envMarkers = markers()
}

func table() []Manager {
	return []Manager{
		{
			Name:      InstallerUV,
			Kind:      KindVenv,
			Active:    []string{"VIRTUAL_ENV"},
			Targets:   []string{"VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT"},
			Places:    uvPlaces,
			Project:   uvProject,
			Marker:    Marker{Name: "pyvenv.cfg", CfgKey: "uv"},
			ClaimsEnv: true,
			Installed: []string{"uv"},
			Programs:  []string{"uv", "uvx"},
			Modules:   []string{"uv"},
			Reinstall: uvReinstall,
		},
		{
			Name:      InstallerConda,
			Kind:      KindConda,
			Active:    []string{"CONDA_PREFIX"},
			Targets:   []string{"CONDA_PREFIX"},
			Places:    condaPlaces,
			Project:   condaProject,
			Nested:    []string{"envs"},
			Marker:    Marker{Name: "conda-meta", Dir: true},
			ClaimsEnv: true,
			Installed: []string{"conda"},
			Programs:  []string{"conda", "mamba", "micromamba"},
			Modules:   []string{"conda"},
			Refuse:    condaRefusal,
		},
		// Poetry's envs are venvs (virtualenv) in its virtualenvs folder;
		// its installs leave INSTALLER "Poetry X.Y.Z" (wheel_installer.py),
		// which names no manager here, so pip reinstalls in them.
		{Name: "poetry", Kind: KindVenv, Places: poetryPlaces, Project: poetryProject},
		{Name: "pdm", Kind: KindVenv, Places: pdmPlaces, Project: pdmProject},
		// WORKON_HOME is virtualenvwrapper's first: an env there is its
		{Name: "virtualenvwrapper", Kind: KindVenv, Places: venvwrapperPlaces},
		{Name: "pipenv", Kind: KindVenv, Places: pipenvPlaces, Project: pipenvProject},
		{Name: "hatch", Kind: KindVenv, Places: hatchPlaces, Project: hatchProject},
		// pyenv's versions are interpreter prefixes; pyenv-virtualenv's envs
		// are venvs inside them.
		{Name: "pyenv", Kind: KindPrefix, Places: pyenvPlaces, Project: pyenvProject},
		{Name: "pipx", Kind: KindVenv, Places: pipxPlaces},
		// Jupyter kernels run the interpreter their kernel.json names.
		{Name: "jupyter", Kind: KindVenv, Places: jupyterPlaces},
		{Name: "system", Kind: KindPrefix, Places: systemPlaces},
		{Name: "user-site", Kind: KindPrefix, Places: userSitePlaces},
		// An embedded Python (embedded.go) is found by its files wherever
		// its app keeps it; only its own pip installs into it.
		{Name: embeddedManager, Kind: KindEmbedded, ClaimsEnv: true, Reinstall: embeddedReinstall},
		// The one-click apps that keep their own environments (apps.go):
		// their places are the apps table's, one entry an app.
		{Name: "apps", Places: appPlaces},
		{
			Name:      InstallerPip,
			Kind:      KindVenv,
			Active:    []string{"VIRTUAL_ENV"},
			Targets:   []string{"VIRTUAL_ENV"},
			Project:   venvProject,
			Marker:    Marker{Name: "pyvenv.cfg"},
			Installed: []string{"pip"},
			Programs:  []string{"pip*"},
			Modules:   []string{"pip"},
			Reinstall: pipReinstall,
		},
	}
}

// managerNamed returns the manager whose Name is name.
func managerNamed(name string) (*Manager, bool) {
	for i := range managers {
		if managers[i].Name == name {
			return &managers[i], true
		}
	}
	return nil, false
}

// installedBy returns the manager whose installs leave these INSTALLER
// contents, among those that make kind's environments: a venv's packages
// name its installer, a conda env's manager is known from conda-meta.
func installedBy(contents, kind string) (string, bool) {
	for _, m := range managers {
		if m.Kind == kind && slices.Contains(m.Installed, contents) {
			return m.Name, true
		}
	}
	return "", false
}

// Managers is the managers table, in the order its readers consult it:
// the search (envsearch) reads each entry's Active, Places, Project,
// Nested and Marker from it, and tests hold every entry to its rules.
// The copy is the caller's; the entries' functions are shared.
func Managers() []Manager { return slices.Clone(managers) }

// EnvMarkers are the distinct marker entries (name and type) of the
// table, in table order: what makes a folder an environment at all.
func EnvMarkers() []Marker { return slices.Clone(envMarkers) }

// ActiveVars lists every manager's Active variables once, in table order.
func ActiveVars() []string { return varsOf(func(m Manager) []string { return m.Active }) }

// TargetVars lists the environment variables that aim a running installer
// at an environment (VIRTUAL_ENV, UV_PROJECT_ENVIRONMENT, CONDA_PREFIX),
// each once, for the culprit search to match against.
func TargetVars() []string { return varsOf(func(m Manager) []string { return m.Targets }) }

func varsOf(of func(Manager) []string) []string {
	var out []string
	for _, m := range managers {
		for _, v := range of(m) {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

func markers() []Marker {
	var out []Marker
	for _, m := range managers {
		if m.Marker.Name == "" {
			continue
		}
		k := Marker{Name: m.Marker.Name, Dir: m.Marker.Dir}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}
