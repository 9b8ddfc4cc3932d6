package procs

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Installer finds the process installing into env right now. It reads
// /proc on its own (no buffer shared with Scan), so it may run while a
// Scan does.
func (s *scanner) Installer(ctx context.Context, env string) *Installer {
	return pickInstaller(env, installerCandidates(ctx, s.root, os.Getpid()))
}

// installerCandidates lists the installer processes under root, leaving
// out self (GPU Canary's own PID). Only an installer's environment,
// working directory and executable are read.
func installerCandidates(ctx context.Context, root string, self int) []candidate {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []candidate
	for _, e := range ents {
		if ctx.Err() != nil {
			break
		}
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join(root, e.Name())
		raw, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if !isInstaller(argv) {
			continue
		}
		c := candidate{pid: pid, argv: argv}
		if environ, err := os.ReadFile(filepath.Join(dir, "environ")); err == nil {
			c.envVars = targetValues(environ)
		}
		c.cwd, _ = os.Readlink(filepath.Join(dir, "cwd"))
		c.exe, _ = os.Readlink(filepath.Join(dir, "exe"))
		out = append(out, c)
	}
	return out
}
