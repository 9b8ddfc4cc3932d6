package procs

import (
	"context"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// Installer finds the process installing into env right now. It takes a
// snapshot of its own (no buffer shared with Scan), so it may run while a
// Scan does.
func (s *winScanner) Installer(ctx context.Context, env string) *Installer {
	return pickInstaller(env, s.installerCandidates(ctx, uint32(os.Getpid())))
}

// installerCandidates lists the installer processes, leaving out self
// (GPU Canary's own PID). Every process's command line is read (the
// program that installs may be python.exe running pip); only an
// installer's environment, current folder and image path are.
func (s *winScanner) installerCandidates(ctx context.Context, self uint32) []candidate {
	_, snap, err := snapshot(nil, nil)
	if err != nil {
		s.log.Debug("the installer search cannot list processes", "err", err)
		return nil
	}
	var out []candidate
	for _, sp := range snap {
		if ctx.Err() != nil {
			break
		}
		if sp.pid == 0 || sp.pid == self || sp.threads == 0 {
			continue
		}
		if c, ok := s.installerCandidate(sp.pid); ok {
			out = append(out, c)
		}
	}
	return out
}

// installerCandidate reads pid as the installer search sees it; ok is
// false when it is no installer or cannot be read.
func (s *winScanner) installerCandidate(pid uint32) (candidate, bool) {
	h, err := s.open(accessRead, pid)
	if err != nil {
		return candidate{}, false
	}
	defer windows.CloseHandle(h)
	pp, err := readParams(h)
	if err != nil {
		return candidate{}, false
	}
	argv, err := windows.DecomposeCommandLine(pp.cmdline)
	if err != nil || !isInstaller(argv) {
		return candidate{}, false
	}
	c := candidate{pid: int(pid), argv: argv}
	if block, err := pp.readEnviron(h); err == nil {
		c.envVars = targetValues(environOfUTF16(block))
	}
	if pp.cwd != "" {
		c.cwd = filepath.Clean(pp.cwd)
	}
	c.exe, _ = imagePath(h)
	return c, true
}
