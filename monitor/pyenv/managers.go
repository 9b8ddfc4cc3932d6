package pyenv

import "slices"

// Manager is one environment manager as the read knows it: what on disk
// says an environment is its, and which INSTALLER contents are its.
// Inspect reads this table and nothing else. Where a manager keeps its
// environments, which variables activate it, which one it uses for a
// project, which running programs are its installers and how it
// reinstalls torch are the managers package's (monitor/pyenv/managers),
// keyed by the same Name: only the search, the resolver, the culprit
// search and the repair plan need them, and the read must not reach up
// to them. A new manager is one entry here and one there.
type Manager struct {
	// Name is the manager's word: Env.Installer holds it, envsearch.Found.Via names
	// it for environments found in its places, managers.InstallerProgram
	// returns it, and the managers package keys its rules by it.
	Name string
	// Kind is Env.Kind of the environments it makes: KindVenv or KindConda.
	Kind string
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
// and by the projects they serve (the managers package's Places and
// Project). The search and envsearch.Resolve ask those rules in this
// order too, so a project's own tool answers before the
// venv-in-the-folder fallback (pip's, last).
//
// Sources: pyvenv.cfg keys are written by CPython's venv (home, version,
// include-system-site-packages), virtualenv (version_info) and uv (uv,
// version_info); conda-meta/ and envs/ are conda's layout, shared by mamba
// and micromamba; INSTALLER is PEP 376/the wheel spec's record of the
// installing tool ("pip", "uv", "conda"). The managers package's Places
// and Project functions cite the tool sources they follow.
var managers []Manager

// envMarkers are the distinct marker entries (name and type), in table
// order: what makes a folder an environment at all.
var envMarkers []Marker

// The table is built in init: the markers are read back from it.
func init() {
	managers = table()
	envMarkers = markers()
}

func table() []Manager {
	return []Manager{
		{
			Name:      InstallerUV,
			Kind:      KindVenv,
			Marker:    Marker{Name: "pyvenv.cfg", CfgKey: "uv"},
			ClaimsEnv: true,
			Installed: []string{"uv"},
		},
		{
			Name:      InstallerConda,
			Kind:      KindConda,
			Marker:    Marker{Name: "conda-meta", Dir: true},
			ClaimsEnv: true,
			Installed: []string{"conda"},
		},
		// Poetry's envs are venvs (virtualenv) in its virtualenvs folder;
		// its installs leave INSTALLER "Poetry X.Y.Z" (wheel_installer.py),
		// which names no manager here, so pip reinstalls in them.
		{Name: "poetry", Kind: KindVenv},
		{Name: "pdm", Kind: KindVenv},
		// WORKON_HOME is virtualenvwrapper's first: an env there is its
		{Name: "virtualenvwrapper", Kind: KindVenv},
		{Name: "pipenv", Kind: KindVenv},
		{Name: "hatch", Kind: KindVenv},
		// pyenv's versions are interpreter prefixes; pyenv-virtualenv's envs
		// are venvs inside them.
		{Name: "pyenv", Kind: KindPrefix},
		{Name: "pipx", Kind: KindVenv},
		// Jupyter kernels run the interpreter their kernel.json names.
		{Name: "jupyter", Kind: KindVenv},
		{Name: "system", Kind: KindPrefix},
		{Name: "user-site", Kind: KindPrefix},
		// An embedded Python (embedded.go) is found by its files wherever
		// its app keeps it; only its own pip installs into it.
		{Name: InstallerEmbedded, Kind: KindEmbedded, ClaimsEnv: true},
		// The one-click apps that keep their own environments (apps.go):
		// their places are the managers package's (managers/apps.go).
		{Name: "apps"},
		{
			Name:      InstallerPip,
			Kind:      KindVenv,
			Marker:    Marker{Name: "pyvenv.cfg"},
			Installed: []string{"pip"},
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
// the managers package joins each entry to its rules, and the search
// (envsearch) reads its Marker. The copy is the caller's.
func Managers() []Manager { return slices.Clone(managers) }

// EnvMarkers are the distinct marker entries (name and type) of the
// table, in table order: what makes a folder an environment at all.
func EnvMarkers() []Marker { return slices.Clone(envMarkers) }

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
