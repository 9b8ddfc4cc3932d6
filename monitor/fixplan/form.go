package fixplan

import (
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
)

// installForm chooses how the installer treats what is installed, and
// says why:
//
//   - torch changes build or release: a plain install (FormInstall). The
//     exact pin (torch==2.5.1+cu124) is not met by the torch installed, so
//     pip and uv replace it unforced; without --no-deps they also install
//     the NVIDIA runtime wheels a CUDA torch requires, from the same index
//     (download.pytorch.org hosts them beside torch: pyenv's runtime.go),
//     and leave every requirement already met alone, as pytorch.org's own
//     install commands do. --force-reinstall --no-deps would leave a CUDA
//     torch without its runtime, which cannot be imported.
//   - the same torch, with runtime wheels missing or at other versions: a
//     plain install of the same pins installs just those and leaves
//     torch's files alone; when its files (or a companion's) are broken
//     too, a forced reinstall with dependencies (FormRepairAll).
//   - the same torch, runtime complete: a forced reinstall without
//     dependencies (FormRepair) rewrites broken files and moves nothing.
func installForm(env *pyenv.Env, p Plan) (managers.InstallForm, string) {
	if !sameAsPin(env, p.Packages[0], p.Variant) {
		return managers.FormInstall, "torch changes build or release, so the exact pins alone make the installer replace it (no --force-reinstall), and without --no-deps it also installs the NVIDIA runtime wheels the new build requires from the same index, as pytorch.org's own install commands do; what is already satisfied stays as it is"
	}
	runtime, broken := pinProblems(env, p)
	switch {
	case runtime && broken:
		return managers.FormRepairAll, "torch's NVIDIA runtime wheels are missing or at other versions and installed files are broken too: a forced reinstall without --no-deps rewrites the pins and installs the runtime (reinstalling torch's other requirements as well)"
	case runtime:
		return managers.FormInstall, "torch's NVIDIA runtime wheels are missing or at other versions: installing the same pins again without --force-reinstall and without --no-deps installs just what torch requires and lacks, and leaves torch's own files as they are"
	}
	return managers.FormRepair, "the same torch stays, so a forced reinstall with --no-deps rewrites the pins' files and moves no other package"
}

// sameAsPin is true when the package pin names is installed at its
// release and CUDA variant already.
func sameAsPin(env *pyenv.Env, pin Pin, variant string) bool {
	have := env.Packages[pin.Name]
	return have != nil && kb.PublicVersion(have.Version) == kb.PublicVersion(pin.Version) &&
		have.Build == pyenv.BuildCUDA && kb.TagForCUDA(have.CUDA) == variant
}

// pinProblems says whether torch's NVIDIA runtime is incomplete, and
// whether the files of torch or a pinned companion are broken otherwise
// (a pip stash aside: the run removes it once verified).
func pinProblems(env *pyenv.Env, p Plan) (runtime, broken bool) {
	for _, pin := range p.Packages {
		pkg := env.Packages[pin.Name]
		if pkg == nil {
			continue
		}
		for _, pr := range pkg.Problems {
			switch pr.Kind {
			case pyenv.ProblemMissingRuntime, pyenv.ProblemRuntimeMismatch:
				runtime = true
			case pyenv.ProblemPipStash:
			default:
				broken = true
			}
		}
	}
	return runtime, broken
}
