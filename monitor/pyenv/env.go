// Package pyenv reads what is installed in a Python environment from
// disk, without ever starting Python: inspecting twenty environments must
// take milliseconds, not the seconds of `import torch`. It holds the
// managers table as far as reading needs it: how each manager's
// environments and installs are recognised. Where each keeps its
// environments, its project rules and its reinstall argv are the
// managers package's (monitor/pyenv/managers), and the search that reads
// those places (envsearch); both sit above this package.
//
// Every reading keeps its evidence (which file said what), and a broken
// install (two torch dist-infos, a torch folder without metadata, a pip stash
// left behind, an unreadable file) is recorded as a Problem, never returned
// as an error that hides the rest of the environment.
package pyenv

// Layout is the on-disk shape of an environment. Both are read whatever the
// host OS is: a Windows venv on a shared drive or under WSL's /mnt/c reads
// the same as on Windows.
type Layout string

const (
	LayoutPOSIX   Layout = "posix"   // bin/, lib/pythonX.Y/site-packages
	LayoutWindows Layout = "windows" // Scripts\, Lib\site-packages
)

// Build is the kind of accelerator a package was built for.
type Build string

const (
	BuildCUDA    Build = "cuda"
	BuildCPU     Build = "cpu"
	BuildROCm    Build = "rocm"
	BuildXPU     Build = "xpu"
	BuildUnknown Build = "unknown"
)

// Installer values for Env.Installer and Package.Installer: the Names of
// the managers in the table (managers.go), and unknown.
const (
	InstallerUV      = "uv"
	InstallerPip     = "pip"
	InstallerConda   = "conda"
	InstallerUnknown = "unknown"
)

// Package names used as keys of Env.Packages.
const (
	Torch          = "torch"
	TorchVision    = "torchvision"
	TorchAudio     = "torchaudio"
	LlamaCppPython = "llama-cpp-python"
	BitsAndBytes   = "bitsandbytes"
)

// Problem kinds (Problem.Kind). They are stable words that rules and the
// JSON output match on.
const (
	ProblemDuplicateDistInfo = "duplicate-dist-info" // two dist-infos of one package: pip and uv see only one
	ProblemMissingDistInfo   = "missing-dist-info"   // a package folder with no metadata: pip cannot uninstall it
	ProblemPipStash          = "pip-stash"           // a ~orch-style folder pip left behind after a failed uninstall
	ProblemUnreadable        = "unreadable"          // a file that exists but cannot be read
	ProblemTruncated         = "truncated"           // a file too large to read whole that held no answer in its bounded prefix
	ProblemMalformed         = "malformed"           // a file that was read but says nothing usable
	ProblemHalfDeleted       = "half-deleted"        // files a build needs are gone (version.py says cuda, no libtorch_cuda)
	ProblemLeftoverFiles     = "leftover-files"      // files of another build survive an overwrite (libtorch_cuda beside a CPU version.py)
	ProblemMissingRuntime    = "missing-runtime"     // NVIDIA runtime wheels a CUDA torch requires are not installed: import fails (runtime.go)
	ProblemRuntimeMismatch   = "runtime-mismatch"    // NVIDIA runtime wheels a CUDA torch requires are installed at versions it does not allow
	// ProblemDamagedFile: a file import needs is there but cannot be
	// what it should be: an empty library, one whose size is not the
	// size RECORD gives, one that is not a regular file (torchfiles.go).
	ProblemDamagedFile = "damaged-file"
	// ProblemWrongPython: torch's compiled core (_C) or its wheel was
	// built for another Python than the one the environment runs, so
	// import torch fails (torchfiles.go).
	ProblemWrongPython = "wrong-python"
	// ProblemMixedRelease: torch/version.py and the dist-info's METADATA
	// name different releases: files of two installs are mixed.
	ProblemMixedRelease = "mixed-release"
	// ProblemBuildMismatch: version.py and METADATA name the same
	// release but different builds (+cpu against a CUDA version.py):
	// pip and uv decide by a build the files are not.
	ProblemBuildMismatch = "build-mismatch"
	// ProblemInterpreterMissing: the environment's interpreter (bin/python,
	// Scripts\python.exe) or the installation it runs is gone: nothing in
	// it can run (venvexe.go). An environment problem.
	ProblemInterpreterMissing = "interpreter-missing"
	// ProblemPythonMismatch: the interpreter runs another Python X.Y than
	// the one whose lib/pythonX.Y/site-packages holds the packages, which
	// it never searches (venvexe.go). An environment problem.
	ProblemPythonMismatch = "python-mismatch"
)

// Evidence records which file said what, so a finding can show its source.
type Evidence struct {
	File string `json:"file"` // absolute path
	Says string `json:"says"` // e.g. "cuda = '12.1'"
}

// Problem is something wrong with how a package or the environment is laid
// out on disk. Problems are states shown to the user.
type Problem struct {
	// Kind is a short stable word: "duplicate-dist-info", "missing-dist-info",
	// "pip-stash", "unreadable", "truncated", "malformed".
	Kind    string `json:"kind"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Package is what the disk says about one installed distribution.
type Package struct {
	// Version is the most precise version known: torch/version.py's
	// __version__ (which carries the local tag, "2.5.1+cu124") when present,
	// else the dist-info's.
	Version string `json:"version"`
	// DistVersion is the dist-info METADATA Version: (no local tag for PyPI wheels).
	DistVersion string `json:"dist_version,omitempty"`
	Build       Build  `json:"build"`
	// CUDA is major.minor ("12.1") for a CUDA build.
	CUDA string `json:"cuda,omitempty"`
	// ROCm is the HIP version for a ROCm build ("6.2.41133").
	ROCm string `json:"rocm,omitempty"`
	// XPU is the XPU version string for an XPU build.
	XPU string `json:"xpu,omitempty"`
	// Installer is the dist-info INSTALLER file ("pip", "uv", "conda"), empty when absent.
	Installer string `json:"installer,omitempty"`
	// DirectURL is direct_url.json's url, for URL/path/VCS installs.
	DirectURL string `json:"direct_url,omitempty"`
	// Editable is true when direct_url.json says dir_info editable (`pip
	// install -e`): import loads the code of a source checkout, which a
	// reinstall by pip uninstalls and replaces with a wheel (SourceDir).
	Editable bool `json:"editable,omitempty"`
	// DistInfo is the dist-info (or conda-meta record) directory that was read.
	DistInfo string `json:"dist_info,omitempty"`
	// Site is the site folder it was read from: the first of the
	// environment's Sites that holds it, the copy `import` loads.
	Site string `json:"site,omitempty"`
	// Libs lists the accelerator libraries the package ships, by file name
	// (torch/lib/libtorch_cuda.so, libbitsandbytes_cuda124.so, libggml-cuda.so).
	Libs []string `json:"libs,omitempty"`
	// Backends lists the compute backends the package ships: for
	// llama-cpp-python "cuda", "hip", "vulkan", "metal", "cpu"; for
	// bitsandbytes the CUDA versions of its libraries ("124", "126").
	Backends []string   `json:"backends,omitempty"`
	Evidence []Evidence `json:"evidence,omitempty"`
	Problems []Problem  `json:"problems,omitempty"`
	// Shadows is the next copy import would load were this one gone, read
	// where a later folder on the import path holds one (torch only): a
	// user-site torch hides the environment's own.
	Shadows *Package `json:"shadows,omitempty"`

	// requires are the dist-info METADATA's Requires-Dist lines, which
	// the runtime check reads (runtime.go); not part of the JSON.
	requires []string
}

// Env is one Python environment as read from disk.
type Env struct {
	Path string `json:"path"` // absolute
	// Kind is the Kind of the manager whose marker it has: KindVenv
	// (pyvenv.cfg: venv, virtualenv, uv), KindConda (conda-meta/) or
	// KindPrefix (an interpreter's own installation: /usr, a pyenv
	// version, the user base ~/.local).
	Kind   string `json:"kind"`
	Python string `json:"python"` // "3.11"
	Layout Layout `json:"layout"`
	// Installer is the environment's manager, a Manager's Name (uv, pip,
	// conda), or unknown.
	Installer string `json:"installer"`
	// App names the one-click app whose environment it is ("ComfyUI
	// portable", "Stability Matrix (ComfyUI)"), from its path and the
	// app's files around it (AppOf); empty when it is no known app's.
	App string `json:"app,omitempty"`
	// SitePackages is the directory packages are installed into.
	SitePackages string `json:"site_packages,omitempty"`
	// Sites are the folders `import` searches for packages, in the order
	// Python puts them on sys.path: the environment's own, then (where
	// Python adds them) the user site and the base interpreter's. Each
	// package is read from the first that holds it.
	Sites []Site `json:"sites,omitempty"`
	// Packages holds torch, its companions, llama-cpp-python, bitsandbytes
	// and the nvidia-* runtime packages, by normalized distribution name.
	Packages map[string]*Package `json:"packages"`
	Evidence []Evidence          `json:"evidence,omitempty"`
	Problems []Problem           `json:"problems,omitempty"`
	// CUDALibs are the CUDA libraries the packages installed, with the
	// GPU architectures each carries (cudalibs.go): torch's
	// libtorch_cuda first.
	CUDALibs []CUDALib `json:"cuda_libs,omitempty"`
	// PathCode names the .pth import lines that change the import path
	// by code GPU Canary does not run (internal/sitepath's ReadCode): where import finds
	// torch may then differ from where it was read.
	PathCode []Evidence `json:"path_code,omitempty"`

	// recreate is set when the interpreter is missing or runs another
	// Python than the packages': how to make the venv again
	// (Recreate); not part of the JSON.
	recreate *venvRecreate
	// pip says whether site-packages holds pip (PipSeen), as the read saw
	// it: the advice's command runs `python -m pip` only where there is
	// one. Not part of the JSON.
	pip pipState
}

// pipState is whether an environment's site-packages holds pip: not
// known (an Env not read from disk), or as its read saw it.
type pipState uint8

const (
	pipUnknown pipState = iota
	pipPresent
	pipAbsent
)

// Site is one folder on an environment's import path.
type Site struct {
	Path string `json:"path"`
	// From says whose it is: SiteOwn, SiteUser, SiteBase, or SitePth and
	// SiteEditable for the folders a .pth file adds.
	From string `json:"from"`
	// Pth and Line are the .pth file and its line (from 1) that put the
	// folder on the import path (SitePth) or installed the editable
	// finder that maps Package to it (SiteEditable).
	Pth  string `json:"pth,omitempty"`
	Line int    `json:"line,omitempty"`
	// Package is the import name an editable finder maps to Path, the
	// package's own folder (SiteEditable only).
	Package string `json:"package,omitempty"`
}

// Site.From values.
const (
	SiteOwn  = "own"  // the environment's own site-packages (or a prefix's dist-packages)
	SiteUser = "user" // the user site (pip install --user): ~/.local/lib/pythonX.Y/site-packages
	SiteBase = "base" // the base interpreter's, inherited through include-system-site-packages
	// SitePth is a folder a path line of a .pth file in an earlier site
	// appends to sys.path (an editable install, a shared site).
	SitePth = "pth"
	// SiteEditable is a package folder that setuptools' editable finder
	// (a .pth import line and its __editable___*_finder.py MAPPING)
	// serves. The finder is appended to sys.meta_path, after the path
	// finder, so it is searched after every folder on sys.path.
	SiteEditable = "editable"
)

// Torch returns the environment's torch, or nil when torch is not installed.
func (e *Env) Torch() *Package { return e.Packages[Torch] }

// PipSeen says whether the read found pip in the environment's
// site-packages, and known is false when this Env was not read from disk
// (made by hand, decoded from JSON). The read only records what it saw:
// what a command line does with it (the managers package's reinstall
// and uninstall argv, which look at the disk when known is false) is
// not the read's.
func (e *Env) PipSeen() (has, known bool) {
	return e.pip == pipPresent, e.pip != pipUnknown
}
