package pyenv

import (
	"encoding/json"
	"github.com/gpucanary/gpucanary/monitor/safefs"
	"os"
	"path/filepath"
	"strings"
)

// kernelSpec is the part of a Jupyter kernel.json that names the
// interpreter: argv[0] (jupyter_client's kernelspec format).
type kernelSpec struct {
	Argv []string `json:"argv"`
}

// kernelEnvs reads every NAME/kernel.json in a kernels folder and returns
// the environment each kernel's interpreter runs in, with the kernel.json
// as what named it. A kernel whose argv[0] is a bare name ("python", as
// ipykernel writes for the Python it was installed with) runs the
// interpreter of the prefix whose share/jupyter holds it.
func kernelEnvs(dir string) []candidate {
	ents, err := safefs.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []candidate
	for _, e := range ents {
		if !e.IsDir() && e.Type()&os.ModeSymlink == 0 {
			continue
		}
		file := filepath.Join(dir, e.Name(), "kernel.json")
		data, err := readSmall(file, smallFileLimit)
		if err != nil {
			continue
		}
		var k kernelSpec
		if json.Unmarshal(data, &k) != nil || len(k.Argv) == 0 || k.Argv[0] == "" {
			continue
		}
		exe := k.Argv[0]
		if !filepath.IsAbs(exe) {
			// PREFIX/share/jupyter/kernels/NAME/kernel.json
			prefix := filepath.Dir(filepath.Dir(filepath.Dir(dir)))
			if filepath.Base(filepath.Dir(dir)) == "jupyter" && filepath.Base(filepath.Dir(filepath.Dir(dir))) == "share" && IsEnv(prefix) {
				out = append(out, candidate{path: prefix, from: file})
			}
			continue
		}
		if env, ok := envOfInterpreter(exe); ok {
			out = append(out, candidate{path: env, from: file})
		} else if absent(exe) { // missing, or a link that leads nowhere
			// The kernel's environment is gone with its interpreter:
			// said, not dropped (the kernel fails to start).
			out = append(out, candidate{path: interpreterHome(exe), from: file, missing: exe})
		}
	}
	return out
}

// interpreterHome is where an interpreter's environment is, from its
// path alone: the folder above bin/ or Scripts/, else its own folder.
func interpreterHome(exe string) string {
	dir := filepath.Dir(exe)
	switch strings.ToLower(filepath.Base(dir)) {
	case "bin", "scripts":
		return filepath.Dir(dir)
	}
	return dir
}

// envOfInterpreter finds the environment an interpreter belongs to: the
// folder above its bin/ or Scripts/ (or, for a Windows conda env or
// python.org install, the folder python.exe is in), when that is an
// environment. The path is tried as given first, so that .venv/bin/python
// (a link to /usr/bin/python3.11) is the venv's, then with its links
// resolved (a link elsewhere to an environment's interpreter).
func envOfInterpreter(exe string) (string, bool) {
	for range 2 {
		dir := filepath.Dir(exe)
		switch strings.ToLower(filepath.Base(dir)) {
		case "bin", "scripts":
			if p := filepath.Dir(dir); IsEnv(p) {
				return p, true
			}
		}
		if IsEnv(dir) {
			return dir, true
		}
		real, err := filepath.EvalSymlinks(exe)
		if err != nil || real == exe {
			break
		}
		exe = real
	}
	return "", false
}
