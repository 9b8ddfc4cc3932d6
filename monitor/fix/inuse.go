package fix

import (
	"os"
	"path/filepath"

	"github.com/gpucanary/gpucanary/monitor/procs"
)

// runsFrom reports whether process p runs from the environment at env,
// whichever way either was named. The process's program may be a path
// through a symlink to the environment (or env may be one), and its
// working folder may have changed since it started from a relative path;
// so beside procs.Proc.Inside on the names as given, every path is
// compared with its symlinks resolved (real is env's real path), and the
// runtime libraries it has mapped count: /proc/PID/maps, like
// /proc/PID/exe, gives real paths, and a job that imported torch from
// env has env's libtorch mapped wherever it has since gone.
func runsFrom(p procs.Proc, env, real string) bool {
	if p.Inside(env) || (real != env && p.Inside(real)) {
		return true
	}
	if p.EnvPath != "" && samePath(realPath(p.EnvPath), real) {
		return true
	}
	if prog := p.Program(); prog != "" {
		// The folder's links are resolved, not the program's own: a
		// venv's python is a link to the base interpreter, outside it.
		if procs.PathWithin(filepath.Join(realPath(filepath.Dir(prog)), filepath.Base(prog)), real) {
			return true
		}
	}
	for _, lib := range p.LibPaths {
		if procs.PathWithin(realPath(lib), real) {
			return true
		}
	}
	return false
}

// samePath compares two paths as the platform does.
func samePath(a, b string) bool { return procs.PathWithin(a, b) && procs.PathWithin(b, a) }

// realPath is path with its symlinks resolved; as much of it as exists
// when the rest does not (a process's folder deleted since), else path.
func realPath(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	dir, base := filepath.Split(filepath.Clean(path))
	dir = filepath.Clean(dir)
	if dir == path || base == "" {
		return filepath.Clean(path)
	}
	return filepath.Join(realPath(dir), base)
}

// inUse lists the processes of ps, other than this one, that run from
// env (runsFrom).
func inUse(ps []procs.Proc, env string) []procs.Proc {
	real := realPath(env)
	self := os.Getpid()
	var out []procs.Proc
	for _, p := range ps {
		if p.PID != self && runsFrom(p, env, real) {
			out = append(out, p)
		}
	}
	return out
}
