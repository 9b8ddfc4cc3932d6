package pyenv_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// pthVenv writes a venv with no torch of its own and returns it with its
// site-packages.
func pthVenv(t *testing.T) (root, site string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "venv")
	must(t, pyenvtest.Write(root, pyenvtest.Spec{}))
	return root, filepath.Join(root, "lib", "python3.11", "site-packages")
}

// pep660Torch lays torch out as `pip install -e` of a setuptools project
// leaves it (PEP 660): the code in src/torch, the dist-info, saying
// editable in direct_url.json, in site.
func pep660Torch(t *testing.T, site, src, version, cuda string) {
	t.Helper()
	writeTorch(t, src, version, cuda)
	dist := "torch-" + version + ".dist-info"
	must(t, os.Rename(filepath.Join(src, dist), filepath.Join(site, dist)))
	writeFile(t, site, dist+"/direct_url.json", `{"dir_info": {"editable": true}, "url": "file://`+filepath.Dir(src)+`"}`)
}

// finderPth writes setuptools' editable finder for torch into site: the
// .pth file with its import line and the finder module with MAPPING.
func finderPth(t *testing.T, site, pthName, mapping string) string {
	t.Helper()
	mod := "__editable___torch_2_5_1_finder"
	writeFile(t, site, mod+".py", "import sys\nfrom importlib.machinery import ModuleSpec, PathFinder\n\n"+
		"MAPPING: dict[str, str] = "+mapping+"\nNAMESPACES: dict[str, list[str]] = {}\nPATH_PLACEHOLDER = '__editable__.torch-2.5.1.finder' + \".__path_hook__\"\n\n\ndef install():\n    pass\n")
	writeFile(t, site, pthName, "import "+mod+"; "+mod+".install()")
	return filepath.Join(site, pthName)
}

func torchProblems(env *pyenv.Env) []pyenv.Problem {
	out := append([]pyenv.Problem(nil), env.Problems...)
	if tor := env.Torch(); tor != nil {
		out = append(out, tor.Problems...)
	}
	return out
}

// TestPthTorch: a torch that `import torch` reaches through a .pth file
// is read where it is, with its metadata, and its evidence names the
// .pth file and line; a torch earlier on the import path wins.
func TestPthTorch(t *testing.T) {
	t.Run("editable install, path line", func(t *testing.T) {
		root, site := pthVenv(t)
		src := filepath.Join(filepath.Dir(root), "pytorch")
		pep660Torch(t, site, src, "2.5.1+cu121", "12.1")
		pth := filepath.Join(site, "__editable__.torch-2.5.1+cu121.pth")
		writeFile(t, site, filepath.Base(pth), src+"\n")
		env, err := pyenv.InspectWith(root, noUser(t.TempDir()))
		must(t, err)
		tor := env.Torch()
		if tor == nil || tor.Version != "2.5.1+cu121" || tor.Build != pyenv.BuildCUDA || tor.CUDA != "12.1" || tor.Site != src {
			t.Fatalf("torch = %+v, want the CUDA 12.1 torch in %s (sites %+v)", tor, src, env.Sites)
		}
		if tor.DistInfo != filepath.Join(site, "torch-2.5.1+cu121.dist-info") || tor.Installer != "pip" {
			t.Errorf("DistInfo %s, Installer %q: the dist-info in site-packages belongs to it", tor.DistInfo, tor.Installer)
		}
		if ps := torchProblems(env); len(ps) > 0 {
			t.Errorf("an editable torch has problems: %+v", ps)
		}
		if !tor.Editable || tor.SourceDir() != filepath.Dir(src) {
			t.Errorf("Editable %v, SourceDir %q: direct_url.json says editable, from %s", tor.Editable, tor.SourceDir(), filepath.Dir(src))
		}
		if !hasEvidence(tor.Evidence, pth, "line 1 puts "+src+" on the import path") {
			t.Errorf("evidence does not name the .pth file and line: %+v", tor.Evidence)
		}
		want := []pyenv.Site{{Path: site, From: pyenv.SiteOwn}, {Path: src, From: pyenv.SitePth, Pth: pth, Line: 1}}
		if fmt.Sprint(env.Sites) != fmt.Sprint(want) {
			t.Errorf("Sites = %+v, want %+v", env.Sites, want)
		}
	})
	t.Run("editable install, relative path line after comments", func(t *testing.T) {
		root, site := pthVenv(t)
		src := filepath.Join(filepath.Dir(root), "pytorch")
		pep660Torch(t, site, src, "2.5.1+cu121", "12.1")
		writeFile(t, site, "easy-install.pth", "# written by setuptools\n\n../../../../pytorch  \r\n")
		env, err := pyenv.InspectWith(root, noUser(t.TempDir()))
		must(t, err)
		if tor := env.Torch(); tor == nil || tor.Site != src || !hasEvidence(tor.Evidence, filepath.Join(site, "easy-install.pth"), "line 3 puts") {
			t.Fatalf("torch = %+v, want it from %s by line 3", tor, src)
		}
	})
	t.Run("editable install, setuptools finder", func(t *testing.T) {
		root, site := pthVenv(t)
		src := filepath.Join(filepath.Dir(root), "pytorch")
		pep660Torch(t, site, src, "2.5.1+cu121", "12.1")
		pkg := filepath.Join(src, "torch")
		pth := finderPth(t, site, "__editable__.torch-2.5.1.pth", "{'functorch': '/nowhere/functorch', 'torch': '"+pkg+"'}")
		env, err := pyenv.InspectWith(root, noUser(t.TempDir()))
		must(t, err)
		tor := env.Torch()
		if tor == nil || tor.Version != "2.5.1+cu121" || tor.Build != pyenv.BuildCUDA || tor.Site != pkg || tor.DistInfo != filepath.Join(site, "torch-2.5.1+cu121.dist-info") {
			t.Fatalf("torch = %+v, want the CUDA torch the finder maps to %s (sites %+v)", tor, pkg, env.Sites)
		}
		if ps := torchProblems(env); len(ps) > 0 {
			t.Errorf("an editable torch has problems: %+v", ps)
		}
		if !hasEvidence(tor.Evidence, pth, "line 1 installs setuptools' editable finder, which maps torch to "+pkg) {
			t.Errorf("evidence does not name the finder's .pth line: %+v", tor.Evidence)
		}
		last := env.Sites[len(env.Sites)-1]
		if last.From != pyenv.SiteEditable || last.Package != "torch" || last.Pth != pth || last.Line != 1 {
			t.Errorf("the finder's site = %+v", last)
		}
	})
	t.Run("shared site holding a CUDA torch", func(t *testing.T) {
		root, site := pthVenv(t)
		shared := filepath.Join(filepath.Dir(root), "shared")
		must(t, pyenvtest.Write(shared, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip\n"}}))
		sharedSite := filepath.Join(shared, "lib", "python3.11", "site-packages")
		writeFile(t, site, "shared.pth", sharedSite+"\n")
		env, err := pyenv.InspectWith(root, noUser(t.TempDir()))
		must(t, err)
		tor := env.Torch()
		if tor == nil || tor.Version != "2.5.1+cu124" || tor.CUDA != "12.4" || tor.Site != sharedSite || !strings.HasPrefix(tor.DistInfo, sharedSite) {
			t.Fatalf("torch = %+v, want the shared CUDA 12.4 torch with its dist-info", tor)
		}
		if ps := torchProblems(env); len(ps) > 0 {
			t.Errorf("problems: %+v", ps)
		}
	})
	t.Run("the env's own torch comes first", func(t *testing.T) {
		root, site := pthVenv(t)
		writeTorch(t, site, "2.5.1+cpu", "")
		shared := filepath.Join(filepath.Dir(root), "shared")
		writeTorch(t, shared, "2.5.1+cu124", "12.4")
		writeFile(t, site, "shared.pth", shared+"\n")
		env, err := pyenv.InspectWith(root, noUser(t.TempDir()))
		must(t, err)
		tor := env.Torch()
		if tor == nil || tor.Version != "2.5.1+cpu" || tor.Site != site {
			t.Fatalf("torch = %+v, want the venv's own CPU torch", tor)
		}
		if !hasEvidence(tor.Evidence, shared, "shadowed") || !hasEvidence(tor.Evidence, shared, "shared.pth") {
			t.Errorf("evidence does not name the shadowed torch and its .pth: %+v", tor.Evidence)
		}
	})
	t.Run("a .pth folder comes before an editable finder", func(t *testing.T) {
		root, site := pthVenv(t)
		dir := filepath.Dir(root)
		writeTorch(t, filepath.Join(dir, "onpath"), "2.5.1+cpu", "")
		writeTorch(t, filepath.Join(dir, "finder"), "2.5.1+cu124", "12.4")
		finderPth(t, site, "a-finder.pth", `{"torch": "`+filepath.Join(dir, "finder", "torch")+`"}`)
		writeFile(t, site, "z.pth", filepath.Join(dir, "onpath")+"\n")
		env, err := pyenv.InspectWith(root, noUser(t.TempDir()))
		must(t, err)
		if tor := env.Torch(); tor == nil || tor.Version != "2.5.1+cpu" {
			t.Fatalf("torch = %+v, want the CPU torch on sys.path: the finder is searched after sys.path", tor)
		}
	})
	t.Run("a .pth to a missing folder", func(t *testing.T) {
		root, site := pthVenv(t)
		writeFile(t, site, "gone.pth", filepath.Join(filepath.Dir(root), "deleted-checkout")+"\n")
		env, err := pyenv.InspectWith(root, noUser(t.TempDir()))
		must(t, err)
		if env.Torch() != nil || len(env.Sites) != 1 || len(env.Problems) > 0 {
			t.Errorf("torch %+v, sites %+v, problems %+v: a missing folder is skipped silently", env.Torch(), env.Sites, env.Problems)
		}
	})
	t.Run("metadata only, no editable code: still half deleted", func(t *testing.T) {
		root, site := pthVenv(t)
		pep660Torch(t, site, filepath.Join(filepath.Dir(root), "pytorch"), "2.5.1+cu121", "12.1")
		must(t, os.RemoveAll(filepath.Join(filepath.Dir(root), "pytorch")))
		writeFile(t, site, "__editable__.torch-2.5.1+cu121.pth", "import _torch_editable_hook\n")
		env, err := pyenv.InspectWith(root, noUser(t.TempDir()))
		must(t, err)
		tor := env.Torch()
		if tor == nil || len(tor.Problems) != 1 || tor.Problems[0].Kind != pyenv.ProblemHalfDeleted {
			t.Fatalf("torch = %+v, want its metadata read as half deleted", tor)
		}
		if !hasEvidence(tor.Evidence, filepath.Join(site, "__editable__.torch-2.5.1+cu121.pth"), "runs code GPU Canary does not run") {
			t.Errorf("the unread import line beside it is not said: %+v", tor.Evidence)
		}
	})
	t.Run("no torch anywhere: unread import lines are said", func(t *testing.T) {
		root, site := pthVenv(t)
		writeFile(t, site, "hook.pth", "import sys, os; sys.path.append(os.environ['TORCH_SITE'])\n")
		env, err := pyenv.InspectWith(root, noUser(t.TempDir()))
		must(t, err)
		if env.Torch() != nil || !hasEvidence(env.Evidence, filepath.Join(site, "hook.pth"), "line 1 runs code GPU Canary does not run") {
			t.Errorf("torch %+v, evidence %+v", env.Torch(), env.Evidence)
		}
		if !hasEvidence(env.PathCode, filepath.Join(site, "hook.pth"), "line 1 changes the import path by code GPU Canary does not run (import sys, os; sys.path.append(os.environ['TORCH_SITE']))") {
			t.Errorf("PathCode %+v", env.PathCode)
		}
	})
}

// TestPthBounds: a site full of .pth files, a .pth file of many lines or
// of many bytes, and a .pth file whose name starts with '.' are read only
// as far as the bounds go, and the evidence says what was left.
func TestPthBounds(t *testing.T) {
	t.Run("too many .pth files", func(t *testing.T) {
		root, site := pthVenv(t)
		dir := filepath.Dir(root)
		for i := range 70 {
			writeFile(t, site, fmt.Sprintf("p%02d.pth", i), filepath.Join(dir, fmt.Sprintf("d%02d", i))+"\n")
			must(t, os.MkdirAll(filepath.Join(dir, fmt.Sprintf("d%02d", i)), 0o755))
		}
		env, err := pyenv.InspectWith(root, noUser(t.TempDir()))
		must(t, err)
		if len(env.Sites) != 1+64 || env.Sites[64].Path != filepath.Join(dir, "d63") {
			t.Errorf("%d sites, last %+v; want the folders of the first 64 .pth files", len(env.Sites), env.Sites[len(env.Sites)-1])
		}
		if !hasEvidence(env.Evidence, site, "only the first 64 .pth files") {
			t.Errorf("evidence %+v", env.Evidence)
		}
	})
	t.Run("too many lines", func(t *testing.T) {
		root, site := pthVenv(t)
		late := filepath.Join(filepath.Dir(root), "late")
		must(t, os.MkdirAll(late, 0o755))
		writeFile(t, site, "long.pth", strings.Repeat("# filler\n", 1000)+late+"\n")
		env, err := pyenv.InspectWith(root, noUser(t.TempDir()))
		must(t, err)
		if len(env.Sites) != 1 || !hasEvidence(env.Evidence, filepath.Join(site, "long.pth"), "only its first 1000 lines") {
			t.Errorf("sites %+v, evidence %+v", env.Sites, env.Evidence)
		}
	})
	t.Run("too many bytes", func(t *testing.T) {
		root, site := pthVenv(t)
		early := filepath.Join(filepath.Dir(root), "early")
		must(t, os.MkdirAll(early, 0o755))
		writeFile(t, site, "huge.pth", early+"\n# "+strings.Repeat("x", 300<<10)+"\n"+early+"-never\n")
		env, err := pyenv.InspectWith(root, noUser(t.TempDir()))
		must(t, err)
		if len(env.Sites) != 2 || env.Sites[1].Path != early || !hasEvidence(env.Evidence, filepath.Join(site, "huge.pth"), "KiB) were read") {
			t.Errorf("sites %+v, evidence %+v", env.Sites, env.Evidence)
		}
	})
	t.Run("too many folders", func(t *testing.T) {
		root, site := pthVenv(t)
		var lines strings.Builder
		for i := range 300 {
			d := filepath.Join(filepath.Dir(root), fmt.Sprintf("f%03d", i))
			must(t, os.MkdirAll(d, 0o755))
			lines.WriteString(d + "\n")
		}
		writeFile(t, site, "many.pth", lines.String())
		env, err := pyenv.InspectWith(root, noUser(t.TempDir()))
		must(t, err)
		if len(env.Sites) != 1+256 || !hasEvidence(env.Evidence, filepath.Join(site, "many.pth"), "line 257 and any later .pth file not followed") {
			t.Errorf("%d sites, evidence %+v", len(env.Sites), env.Evidence)
		}
	})
	t.Run("a name starting with a dot", func(t *testing.T) {
		root, site := pthVenv(t)
		hidden := filepath.Join(filepath.Dir(root), "hidden")
		must(t, os.MkdirAll(hidden, 0o755))
		writeFile(t, site, ".hidden.pth", hidden+"\n")
		env, err := pyenv.InspectWith(root, noUser(t.TempDir()))
		must(t, err)
		if len(env.Sites) != 1 || !hasEvidence(env.Evidence, filepath.Join(site, ".hidden.pth"), "not read") {
			t.Errorf("sites %+v, evidence %+v", env.Sites, env.Evidence)
		}
	})
}
