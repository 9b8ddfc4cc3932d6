package envsearch

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/safefs"
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
		data, err := safefs.ReadFile(file, kernelLimit)
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
			if filepath.Base(filepath.Dir(dir)) == "jupyter" && filepath.Base(filepath.Dir(filepath.Dir(dir))) == "share" && pyenv.IsEnv(prefix) {
				out = append(out, candidate{path: prefix, from: file})
			}
			continue
		}
		if env, ok := pyenv.EnvOfInterpreter(exe); ok {
			out = append(out, candidate{path: env, from: file})
		} else if pyenv.Absent(exe) { // missing, or a link that leads nowhere
			// The kernel's environment is gone with its interpreter:
			// said, not dropped (the kernel fails to start).
			out = append(out, candidate{path: pyenv.InterpreterHome(exe), from: file, missing: exe})
		}
	}
	return out
}
