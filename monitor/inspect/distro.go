package inspect

import (
	"fmt"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// DistroJudged adjusts the findings about an environment whose torch the
// operating system's package manager installed (pyenv.DistroManaged:
// Debian's python3-torch in /usr). Such a torch is the system's, there
// for the system's own programs, and usually not what anyone's jobs run:
// found by discovery it is reported but not judged (its errors and
// warnings become notes, so `check` does not fail on the system's
// Python); named on the command line (via "argument") it is judged. Either
// way each finding that a reinstall would fix says that the repair is
// apt's or a virtual environment's, never pip's (fix blocks it).
func DistroJudged(env *pyenv.Env, via string, fs []finding.Finding) []finding.Finding {
	return distroJudged(nil, env, via, fs)
}

// distroJudged is DistroJudged looking at rd's disk (nil: the real one)
// for the interpreter's EXTERNALLY-MANAGED mark.
func distroJudged(rd *pyenv.Reader, env *pyenv.Env, via string, fs []finding.Finding) []finding.Finding {
	site := rd.DistroManaged(env)
	if site == "" {
		return fs
	}
	for i := range fs {
		f := &fs[i]
		if f.Env != env.Path {
			continue
		}
		if finding.FixedByReinstall(f.Code) {
			f.Message += fmt.Sprintf(" torch here is the distribution's package (%s), which pip must not change: `gpucanary fix %s` says how apt repairs it, or how to install a CUDA build in a virtual environment.", site, env.Path)
		}
		if via != "argument" && f.Severity != finding.SeverityInfo {
			f.Severity = finding.SeverityInfo
			f.Message += fmt.Sprintf(" The system's Python is reported, not judged, unless it is named: gpucanary check %s.", env.Path)
		}
	}
	return fs
}
