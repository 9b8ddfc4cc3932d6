// Package managers is what GPU Canary knows of each environment manager
// beyond recognising its environments: where it keeps them (Places, over
// the platform's folders in dirs_*.go; the one-click apps' in apps.go and
// approots_*), which environment it uses for a project folder (Project,
// answering a Resolution), and how it reinstalls or uninstalls a package
// (ReinstallCommand, UninstallCommand: argv only, never run here), which
// variables activate it or aim its installers (ActiveVars, TargetVars),
// and which running programs are its installers (InstallerProgram).
//
// It sits above the reader (monitor/pyenv), whose own table says how an
// environment is recognised (markers, INSTALLER contents): each entry
// here is that entry (pyenv.Manager, embedded) joined by Name to its
// rules here, so a manager is still one entry to
// its readers, while the read never reaches up to the search's places,
// the resolver's project rules or the repair's command lines.
package managers

import (
	"slices"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Manager is one environment manager as the search, the resolver and the
// repair plan read it: pyenv's entry (Name, Kind, Active, Nested,
// Marker, …) and, keyed by its Name, its rules.
type Manager struct {
	pyenv.Manager
	// Active are the environment variables its activation sets to the
	// active environment; discovery reads them first, in table order.
	Active []string
	// Targets are the environment variables that aim one of its running
	// installers at an environment (the culprit search matches them).
	Targets []string
	// Nested are folders inside one of its environments that hold more of
	// them: a conda base install keeps envs/.
	Nested []string
	// Programs are the base names of the programs that install with it at
	// run time, as path.Match patterns ("pip*": pip, pip3, pip3.12);
	// Modules are its `python -m MODULE` names (InstallerProgram).
	Programs []string
	Modules  []string
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
	// Reinstall builds the command that reinstalls packages in one of its
	// environments in the request's InstallForm; nil leaves it to pip.
	Reinstall func(ReinstallRequest) Reinstall
	// Refuse, when set, says why packages it installed must not be
	// reinstalled by pip or uv, with the command that would do it right.
	Refuse func(ReinstallRequest) string
}

// rules are the managers' places, project rules and reinstalls, keyed by
// pyenv's Names; a manager with none has no key. Each Places and Project
// function cites the tool source it follows (managerplaces.go,
// projects.go).
var rules = map[string]Manager{
	pyenv.InstallerUV: {
		Active:   []string{"VIRTUAL_ENV"},
		Targets:  []string{"VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT"},
		Programs: []string{"uv", "uvx"},
		Modules:  []string{"uv"},
		Places:   uvPlaces, Project: uvProject, Reinstall: uvReinstall,
	},
	pyenv.InstallerConda: {
		Active:   []string{"CONDA_PREFIX"},
		Targets:  []string{"CONDA_PREFIX"},
		Nested:   []string{"envs"},
		Programs: []string{"conda", "mamba", "micromamba"},
		Modules:  []string{"conda"},
		Places:   condaPlaces, Project: condaProject, Refuse: condaRefusal,
	},
	"poetry":                {Places: poetryPlaces, Project: poetryProject},
	"pdm":                   {Places: pdmPlaces, Project: pdmProject},
	"virtualenvwrapper":     {Places: venvwrapperPlaces},
	"pipenv":                {Places: pipenvPlaces, Project: pipenvProject},
	"hatch":                 {Places: hatchPlaces, Project: hatchProject},
	"pyenv":                 {Places: pyenvPlaces, Project: pyenvProject},
	"pipx":                  {Places: pipxPlaces},
	"jupyter":               {Places: jupyterPlaces},
	"system":                {Places: systemPlaces},
	"user-site":             {Places: userSitePlaces},
	pyenv.InstallerEmbedded: {Reinstall: embeddedReinstall},
	"apps":                  {Places: appPlaces},
	pyenv.InstallerPip: {
		Active:   []string{"VIRTUAL_ENV"},
		Targets:  []string{"VIRTUAL_ENV"},
		Programs: []string{"pip*"},
		Modules:  []string{"pip"},
		Project:  venvProject, Reinstall: pipReinstall,
	},
}

// table is pyenv's table, in its order, each entry joined to its rules,
// once: the search consults it for every folder it lists.
var table = join()

func join() []Manager {
	var out []Manager
	for _, m := range pyenv.Managers() {
		r := rules[m.Name]
		r.Manager = m
		out = append(out, r)
	}
	return out
}

// Managers is the joined table, in pyenv's order, the order its readers
// consult it: the search (envsearch) reads each entry's Active, Places,
// Project, Nested and Marker from it, and tests hold every entry to its
// rules. The copy is the caller's; the entries' functions are shared.
func Managers() []Manager { return slices.Clone(table) }

// managerNamed returns the joined entry whose Name is name.
func managerNamed(name string) (*Manager, bool) {
	for i := range table {
		if table[i].Name == name {
			return &table[i], true
		}
	}
	return nil, false
}

// ActiveVars lists every manager's Active variables once, in table order.
func ActiveVars() []string { return varsOf(func(m Manager) []string { return m.Active }) }

// TargetVars lists the environment variables that aim a running installer
// at an environment (VIRTUAL_ENV, UV_PROJECT_ENVIRONMENT, CONDA_PREFIX),
// each once, for the culprit search to match against.
func TargetVars() []string { return varsOf(func(m Manager) []string { return m.Targets }) }

func varsOf(of func(Manager) []string) []string {
	var out []string
	for _, m := range table {
		for _, v := range of(m) {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}
