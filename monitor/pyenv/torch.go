package pyenv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// torchLibs is what one listing of torch/lib says.
type torchLibs struct {
	read           bool // the listing succeeded
	cuda, hip, xpu bool // libtorch_cuda / libtorch_hip / libtorch_xpu (.so or .dll)
	cpu            bool // libtorch_cpu
	accelerator    []string
	dir            string
	entries        []os.DirEntry // the listing, for checkTorchFiles
}

// acceleratorLibMarks are substrings of the CUDA, ROCm and XPU libraries a
// torch build ships in torch/lib (Windows bundles the CUDA runtime there).
var acceleratorLibMarks = []string{
	"torch_cuda", "c10_cuda", "torch_hip", "c10_hip", "torch_xpu", "c10_xpu",
	"cudart", "cublas", "cudnn", "nvrtc", "nccl", "cufft", "curand", "cusparse", "cusolver", "nvjitlink",
	"amdhip", "miopen", "rocblas", "hipblas", "rccl", "sycl",
}

// listTorchLib lists torch/lib once; torch/ itself is never walked.
func (rd *Reader) listTorchLib(p *Package, dir string) torchLibs {
	tl := torchLibs{dir: dir}
	ix, err := rd.listDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p.Problems = append(p.Problems, Problem{Kind: ProblemHalfDeleted, Path: dir,
			Message: "torch/lib is missing: torch's native libraries were deleted; reinstall torch"})
		return tl
	case err != nil:
		p.Problems = append(p.Problems, rd.problemFor(dir, "torch/lib", err))
		return tl
	}
	tl.read, tl.entries = true, ix.entries
	for _, e := range ix.entries {
		l := strings.ToLower(e.Name())
		l = strings.TrimPrefix(l, "lib")
		switch {
		case strings.HasPrefix(l, "torch_cuda"):
			tl.cuda = true
		case strings.HasPrefix(l, "torch_hip"):
			tl.hip = true
		case strings.HasPrefix(l, "torch_xpu"):
			tl.xpu = true
		case strings.HasPrefix(l, "torch_cpu"):
			tl.cpu = true
		}
		for _, m := range acceleratorLibMarks {
			if strings.Contains(l, m) {
				tl.accelerator = append(tl.accelerator, e.Name())
				break
			}
		}
	}
	slices.Sort(tl.accelerator)
	return tl
}

// readTorch reads torch from site-packages, or from conda-meta when conda
// installed it, for an environment that runs Python py (X.Y, "" when not
// known). It returns nil when torch is not installed at all.
func readTorch(sp *sitePackages, conda *condaRecord, py string) *Package {
	dists := sp.dists["torch"]
	folder, hasFolder := sp.ix.isDir(sp.path, "torch")
	if len(dists) == 0 && !hasFolder && conda == nil {
		return nil
	}
	p := &Package{Build: BuildUnknown}
	var vp *VersionPy
	var libs torchLibs
	vpPath := sp.file(folder, "version.py")
	if hasFolder {
		vp = sp.rd.readVersionPy(p, vpPath, "torch")
		libs = sp.rd.listTorchLib(p, sp.file(folder, "lib"))
		p.Libs = libs.accelerator
	}
	d := pickDist(p, sp, "torch", dists, vp)
	if d != nil {
		readDist(p, sp, *d)
	}
	if conda != nil && (d == nil || p.Installer == "" || p.Installer == InstallerConda) {
		p.Installer = InstallerConda
		if d == nil {
			p.DistInfo, p.DistVersion = conda.file, conda.version
		}
		p.Evidence = append(p.Evidence, Evidence{File: conda.file, Says: fmt.Sprintf("conda %s %s build %s", conda.name, conda.version, conda.build)})
	}
	switch {
	case d == nil && conda == nil:
		p.Problems = append(p.Problems, Problem{Kind: ProblemMissingDistInfo, Path: sp.file(folder),
			Message: "a torch folder with no torch dist-info: pip and uv think torch is not installed and will not remove these files; delete the folder and reinstall torch"})
	case !hasFolder:
		p.Problems = append(p.Problems, torchNotFolder(sp))
	}
	p.Version = p.DistVersion
	if vp != nil {
		p.Version = vp.Version
	}
	classifyTorch(p, vp, vpPath, conda, libs)
	if hasFolder {
		checkTorchFiles(p, sp, folder, d, vp, libs, py)
	}
	return p
}

// torchNotFolder is the problem of torch's metadata without its folder:
// gone (half deleted), or something else in its place. Checked with pip
// 23: a reinstall over a FIFO named torch fails ("Not a directory"), so
// that one has to be deleted first.
func torchNotFolder(sp *sitePackages) Problem {
	if name, ok := sp.ix.get("torch"); ok {
		path := sp.file(name)
		if kind := sp.rd.fileKind(path); kind != "" && kind != "a folder" {
			return Problem{Kind: ProblemUnreadable, Path: path,
				Message: path + " is " + kind + ", not a folder: import torch fails (No module named 'torch'), and a reinstall fails on it too (Not a directory); delete it, then reinstall torch"}
		}
	}
	return Problem{Kind: ProblemHalfDeleted, Path: sp.path,
		Message: "torch's metadata is installed but the torch folder is gone; reinstall torch"}
}

// classifyTorch decides torch's build: version.py first (cuda -> CUDA X.Y,
// hip -> ROCm, xpu -> XPU, all None -> CPU), then a conda build string,
// then the local tag, then which libtorch_* torch/lib holds. torch/lib
// cross-checks version.py.
func classifyTorch(p *Package, vp *VersionPy, vpPath string, conda *condaRecord, libs torchLibs) {
	switch {
	case vp != nil:
		switch {
		case vp.CUDA != "":
			p.Build, p.CUDA = BuildCUDA, cudaMajorMinor(vp.CUDA)
		case vp.HIP != "":
			p.Build, p.ROCm = BuildROCm, vp.HIP
		case vp.XPU != "":
			p.Build, p.XPU = BuildXPU, vp.XPU
		case xpuTagged(p.DistVersion) || libs.xpu:
			// torch 2.5's XPU wheels write no xpu field in version.py:
			// cuda and hip None is not a CPU build there.
			p.Build = BuildXPU
			p.Evidence = append(p.Evidence, Evidence{File: vpPath, Says: "cuda and hip are None; the version's tag or torch/lib says XPU"})
		default:
			p.Build = BuildCPU
			p.Evidence = append(p.Evidence, Evidence{File: vpPath, Says: "cuda, hip and xpu are None"})
		}
	case conda != nil && p.Installer == InstallerConda && classifiedConda(p, conda.build):
	case tagBuild(p, p.DistVersion):
	case libs.cuda:
		p.Build = BuildCUDA
		p.Evidence = append(p.Evidence, Evidence{File: libs.dir, Says: "holds libtorch_cuda"})
	case libs.hip:
		p.Build = BuildROCm
		p.Evidence = append(p.Evidence, Evidence{File: libs.dir, Says: "holds libtorch_hip"})
	case libs.xpu:
		p.Build = BuildXPU
		p.Evidence = append(p.Evidence, Evidence{File: libs.dir, Says: "holds libtorch_xpu"})
	case libs.cpu:
		p.Build = BuildCPU
		p.Evidence = append(p.Evidence, Evidence{File: libs.dir, Says: "holds libtorch_cpu and no accelerator libtorch"})
	}
	if !libs.read {
		return
	}
	missing := ""
	switch {
	case p.Build == BuildCUDA && !libs.cuda:
		missing = "libtorch_cuda"
	case p.Build == BuildROCm && !libs.hip:
		missing = "libtorch_hip"
	case p.Build == BuildXPU && !libs.xpu:
		missing = "libtorch_xpu"
	}
	if missing != "" {
		p.Problems = append(p.Problems, Problem{Kind: ProblemHalfDeleted, Path: libs.dir,
			Message: fmt.Sprintf("torch says it is a %s build but torch/lib has no %s: the install was half deleted (an interrupted reinstall); reinstall torch", p.Build, missing)})
	}
	if p.Build == BuildCPU && (libs.cuda || libs.hip) {
		p.Problems = append(p.Problems, Problem{Kind: ProblemLeftoverFiles, Path: libs.dir,
			Message: "torch is a CPU build but torch/lib still holds GPU libraries of an earlier build: an overwrite left files behind; reinstall torch"})
	}
}

func classifiedConda(p *Package, build string) bool {
	b, cuda := classifyCondaBuild(build)
	if b == BuildUnknown {
		return false
	}
	p.Build, p.CUDA = b, cuda
	return true
}

// tagBuild classifies from a local version tag ("+cu121").
func tagBuild(p *Package, version string) bool {
	b, detail := classifyLocalTag(version)
	switch b {
	case BuildUnknown:
		return false
	case BuildCUDA:
		p.CUDA = detail
	case BuildROCm:
		p.ROCm = detail
	}
	p.Build = b
	return true
}

// cudaMajorMinor keeps "12.4" of "12.4" or "12.4.1"; other shapes are kept
// as they are, since the disk's reading beats any table.
func cudaMajorMinor(v string) string {
	if mm := majorMinor(v); mm != "" {
		return mm
	}
	return v
}

// readCompanion reads torchvision or torchaudio: the variant comes from
// version.py's literal cuda, else the local tag of __version__ or of the
// dist-info version.
func readCompanion(sp *sitePackages, key, folderName string) *Package {
	dists := sp.dists[key]
	folder, hasFolder := sp.ix.isDir(sp.path, folderName)
	if len(dists) == 0 && !hasFolder {
		return nil
	}
	p := &Package{Build: BuildUnknown}
	var vp *VersionPy
	if hasFolder {
		vp = sp.rd.readVersionPy(p, filepath.Join(sp.path, folder, "version.py"), folderName)
	}
	d := pickDist(p, sp, key, dists, vp)
	if d != nil {
		readDist(p, sp, *d)
	} else {
		p.Problems = append(p.Problems, Problem{Kind: ProblemMissingDistInfo, Path: sp.file(folder),
			Message: "a " + folderName + " folder with no dist-info: pip and uv will not manage it; delete it and reinstall " + key})
	}
	p.Version = p.DistVersion
	switch {
	case vp != nil && vp.CUDA != "":
		p.Version = vp.Version
		p.Build, p.CUDA = BuildCUDA, cudaMajorMinor(vp.CUDA)
	case vp != nil && tagBuild(p, vp.Version):
		p.Version = vp.Version
	default:
		if vp != nil {
			p.Version = vp.Version
		}
		tagBuild(p, p.DistVersion)
	}
	return p
}

// xpuTagged says whether version's local tag is an XPU build's ("+xpu").
func xpuTagged(version string) bool {
	b, _ := classifyLocalTag(version)
	return b == BuildXPU
}
