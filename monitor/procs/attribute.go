package procs

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// attributeByEnviron finds the environment from VIRTUAL_ENV or
// CONDA_PREFIX in the process's environment, else from its interpreter's
// path (…/ENV/bin/python).
func (s *Scanner) attributeByEnviron(p *Proc) {
	environ, err := os.ReadFile(filepath.Join(s.root, strconv.Itoa(p.PID), "environ"))
	if err != nil {
		p.noteUnreadable("environ", err)
	}
	for _, kv := range bytes.Split(environ, []byte{0}) {
		for _, key := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
			if v, ok := bytes.CutPrefix(kv, []byte(key+"=")); ok && len(v) > 0 {
				p.EnvPath, p.EnvVia = filepath.Clean(string(v)), key
				return
			}
		}
	}
	if len(p.Cmdline) > 0 {
		if env := envOfInterpreter(p.Cmdline[0]); env != "" {
			p.EnvPath, p.EnvVia = env, "interpreter"
		}
	}
}

// envOfInterpreter returns ENV for ENV/bin/python3.11 or
// ENV\Scripts\python.exe, when ENV looks like an environment.
func envOfInterpreter(exe string) string {
	exe = filepath.Clean(exe)
	base := strings.ToLower(filepath.Base(exe))
	if !strings.HasPrefix(base, "python") {
		return ""
	}
	dir := filepath.Dir(exe)
	switch strings.ToLower(filepath.Base(dir)) {
	case "bin", "scripts":
		env := filepath.Dir(dir)
		if isEnvDir(env) {
			return env
		}
	}
	if isEnvDir(dir) { // conda on Windows: ENV\python.exe
		return dir
	}
	return ""
}

// attributeByLibs finds the environment from where the mapped runtime
// libraries live: …/ENV/lib/pythonX.Y/site-packages/torch/lib/libtorch_cuda.so.
func attributeByLibs(p *Proc) {
	for _, path := range p.LibPaths {
		if env := envOfSitePackages(path); env != "" {
			p.EnvPath, p.EnvVia = env, "libraries"
			return
		}
	}
}

func envOfSitePackages(path string) string {
	path = filepath.ToSlash(path)
	i := strings.Index(strings.ToLower(path), "/site-packages/")
	if i < 0 {
		return ""
	}
	lib := filepath.Dir(path[:i]) // …/ENV/lib/python3.11 or …/ENV/Lib
	if strings.HasPrefix(strings.ToLower(filepath.Base(lib)), "python") {
		lib = filepath.Dir(lib)
	}
	return filepath.FromSlash(filepath.Dir(lib))
}

// isEnvDir is true for a folder holding pyvenv.cfg or conda-meta.
func isEnvDir(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "pyvenv.cfg")); err == nil {
		return true
	}
	fi, err := os.Stat(filepath.Join(dir, "conda-meta"))
	return err == nil && fi.IsDir()
}
