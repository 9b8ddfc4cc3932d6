package managers

import (
	"path"
	"slices"
	"strings"
)

// InstallerProgram reports whether a command line runs an installer, and
// whose: a manager's program (uv, uvx, pip3, conda, mamba, micromamba), an
// interpreter running a manager's module (`python -m pip`), or an
// interpreter running a manager's console script (`python .../bin/pip`,
// which is how a script with a #! line shows in /proc). Paths may be POSIX
// or Windows, and a Windows ".exe" is dropped.
func InstallerProgram(argv []string) (manager string, ok bool) {
	if len(argv) == 0 {
		return "", false
	}
	name := programName(argv[0])
	if m, ok := managerOfProgram(name); ok {
		return m, true
	}
	if !strings.HasPrefix(name, "python") {
		return "", false
	}
	for i := 1; i+1 < len(argv); i++ {
		if argv[i] != "-m" {
			continue
		}
		for _, m := range table {
			if slices.Contains(m.Modules, argv[i+1]) {
				return m.Name, true
			}
		}
	}
	if len(argv) > 1 {
		return managerOfProgram(programName(argv[1]))
	}
	return "", false
}

// managerOfProgram returns the manager one of whose Programs patterns
// matches name.
func managerOfProgram(name string) (string, bool) {
	for _, m := range table {
		for _, pat := range m.Programs {
			if ok, _ := path.Match(pat, name); ok {
				return m.Name, true
			}
		}
	}
	return "", false
}

// programName is a command's base name, lowercase, without ".exe":
// "/usr/bin/pip3" and `C:\Python311\Scripts\pip3.exe` are both "pip3".
func programName(arg string) string {
	if i := strings.LastIndexAny(arg, `/\`); i >= 0 {
		arg = arg[i+1:]
	}
	arg = strings.ToLower(arg)
	return strings.TrimSuffix(arg, ".exe")
}
