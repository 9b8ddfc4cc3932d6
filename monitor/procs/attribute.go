package procs

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf16"
)

// How a process's environment was found (Proc.EnvVia).
const (
	viaVirtualEnv  = "VIRTUAL_ENV"
	viaCondaPrefix = "CONDA_PREFIX"
	viaInterpreter = "interpreter"
	viaLibraries   = "libraries"
)

// environVars are the variables of a process's environment that
// attribution and the installer search read. The byte slices point into
// the block parsed; nil means unset.
type environVars struct {
	virtualEnv, condaPrefix []byte
	cudaVisibleDevices      []byte
	hasCUDAVisibleDevices   bool
	// pyvenvLauncher is __PYVENV_LAUNCHER__: on Windows a venv's
	// Scripts\python.exe is a redirector that starts the base
	// interpreter with this set to the redirector's path, so the process
	// that loads torch runs C:\Python311\python.exe and only this says
	// which venv it serves.
	pyvenvLauncher []byte
}

// parseEnviron reads an environment block: KEY=VALUE entries each ended by
// a NUL (Linux's /proc/PID/environ; a Windows block once decoded). Empty
// values of VIRTUAL_ENV and CONDA_PREFIX count as unset; an empty
// CUDA_VISIBLE_DEVICES does not (it hides every GPU).
func parseEnviron(environ []byte) environVars {
	var v environVars
	for len(environ) > 0 {
		kv := environ
		if i := bytes.IndexByte(environ, 0); i >= 0 {
			kv, environ = environ[:i], environ[i+1:]
		} else {
			environ = nil
		}
		if val, ok := bytes.CutPrefix(kv, []byte("VIRTUAL_ENV=")); ok && len(val) > 0 {
			v.virtualEnv = val
		} else if val, ok := bytes.CutPrefix(kv, []byte("CONDA_PREFIX=")); ok && len(val) > 0 {
			v.condaPrefix = val
		} else if val, ok := bytes.CutPrefix(kv, []byte("CUDA_VISIBLE_DEVICES=")); ok {
			v.cudaVisibleDevices, v.hasCUDAVisibleDevices = val, true
		} else if val, ok := bytes.CutPrefix(kv, []byte("__PYVENV_LAUNCHER__=")); ok && len(val) > 0 {
			v.pyvenvLauncher = val
		}
	}
	return v
}

// environOfUTF16 turns a Windows environment block (UTF-16 KEY=VALUE
// entries, each ended by a NUL, the block by an empty entry) into the
// NUL-separated UTF-8 form that parseEnviron and targetValues read.
// Windows variable names are case-insensitive ("Virtual_Env" is
// VIRTUAL_ENV), so each name is upper-cased; a name may start with '='
// (the hidden current folder of each drive, "=C:=C:\work").
func environOfUTF16(block []uint16) []byte {
	out := make([]byte, 0, len(block))
	for len(block) > 0 {
		end := slices.Index(block, 0)
		if end < 0 {
			end = len(block)
		}
		if end == 0 {
			break
		}
		kv := string(utf16.Decode(block[:end]))
		name, value := kv, ""
		if i := strings.IndexByte(kv[1:], '='); i >= 0 {
			name, value = kv[:i+1], kv[i+1:]
		}
		out = append(out, strings.ToUpper(name)...)
		out = append(out, value...)
		out = append(out, 0)
		block = block[min(end+1, len(block)):]
	}
	return out
}

// attributeByEnviron finds the environment from VIRTUAL_ENV or
// CONDA_PREFIX in the process's environment (VIRTUAL_ENV wins: a venv
// made inside an active conda environment is the one running), else from
// its interpreter's path: the program as started, resolved against the
// working directory (Proc.Program: "env/bin/python" run elsewhere,
// "./python" run in bin/), then its executable file (Proc.Exe: a conda
// environment's own python; on Linux /proc/PID/exe resolves a venv's
// symlinked python to the base interpreter), then __PYVENV_LAUNCHER__
// (what a Windows venv's redirector passes the base interpreter). It also
// keeps CUDA_VISIBLE_DEVICES, which can hide the GPU from a CUDA build.
func attributeByEnviron(p *Proc, v environVars) {
	if v.hasCUDAVisibleDevices {
		cvd := string(v.cudaVisibleDevices)
		p.CUDAVisibleDevices = &cvd
	}
	switch {
	case v.virtualEnv != nil:
		p.EnvPath, p.EnvVia = filepath.Clean(string(v.virtualEnv)), viaVirtualEnv
	case v.condaPrefix != nil:
		p.EnvPath, p.EnvVia = filepath.Clean(string(v.condaPrefix)), viaCondaPrefix
	default:
		for _, path := range []string{p.Program(), p.Exe, string(v.pyvenvLauncher)} {
			if env := envOfInterpreter(path); path != "" && env != "" {
				p.EnvPath, p.EnvVia = env, viaInterpreter
				return
			}
		}
	}
}

// envOfInterpreter returns ENV for ENV/bin/python3.11 or
// ENV\Scripts\python.exe, when ENV looks like an environment.
func envOfInterpreter(exe string) string {
	if exe == "" {
		return ""
	}
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

// attributeByLibs finds the environment from where the loaded runtime
// libraries live: …/ENV/lib/pythonX.Y/site-packages/torch/lib/libtorch_cuda.so,
// or …\ENV\Lib\site-packages\torch\lib\torch_cuda.dll on Windows.
func attributeByLibs(p *Proc) {
	for _, path := range p.LibPaths {
		if env := envOfSitePackages(path); env != "" {
			p.EnvPath, p.EnvVia = env, viaLibraries
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
	lib := path[:i] // …/ENV/lib/python3.11, or …/ENV/Lib on Windows
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
