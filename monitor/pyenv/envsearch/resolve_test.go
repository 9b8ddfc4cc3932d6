package envsearch_test

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// Known names: each pair was produced by the tool itself, Debian
// bookworm's python3-poetry 1.3.2 (poetry.utils.env.EnvManager.
// generate_env_name(canonicalize_name(NAME), DIR)) and pipenv 2022.12.19
// (pipenv.project.Project().virtualenv_name, run in DIR with its
// Pipfile). Poetry's algorithm is unchanged in its current
// src/poetry/utils/env/env_manager.py; pipenv's is
// pipenv/project.py _get_virtualenv_hash and _sanitize.
var (
	poetryNames = []struct{ name, dir, want string }{
		{"simple-project", "/tmp/disc-names/simple-project", "simple-project-a-YUHOv6"},
		{"my-project", "/tmp/disc-names/My_Project", "my-project-aFrovRFh"}, // pyproject name "My_Project", canonicalized
		{"we ird", "/tmp/disc-names/we ird[1]", "we_ird-Qfdvmx4R"},
	}
	pipenvNames = []struct{ dir, want string }{
		{"/tmp/disc-names/simple-project", "simple-project-H2mHdmH0"},
		{"/tmp/disc-names/My_Project", "My_Project-7Zr_noRd"},
		{"/tmp/disc-names/we ird[1]", "we_ird_1_-27GciQlw"},
	}
)

func TestPoetryEnvName(t *testing.T) {
	for _, tt := range poetryNames {
		if got := managers.PoetryEnvName(tt.name, tt.dir); got != tt.want {
			t.Errorf("PoetryEnvName(%q, %q) = %q, Poetry says %q", tt.name, tt.dir, got, tt.want)
		}
	}
}

func TestPipenvEnvName(t *testing.T) {
	for _, tt := range pipenvNames {
		if got := managers.PipenvEnvName(tt.dir); got != tt.want {
			t.Errorf("PipenvEnvName(%q) = %q, pipenv says %q", tt.dir, got, tt.want)
		}
	}
}

// TestResolve: each form of path a person types resolves to the
// environment its manager would use, by the rule that says so.
func TestResolve(t *testing.T) {
	home := t.TempDir()
	work := t.TempDir()
	envVars := map[string]string{}
	w := managers.Where{Home: home, Getenv: func(k string) string { return envVars[k] }, System: []string{}}
	venv := func(p string) string {
		must(t, pyenvtest.Write(p, pyenvtest.Spec{}))
		writeFile(t, p, "pyvenv.cfg", cfgVirtualenv)
		return p
	}
	uvVenv := func(p string) string {
		must(t, pyenvtest.Write(p, pyenvtest.Spec{Manager: "uv"}))
		return p
	}
	project := func(name, pyproject string, files ...string) string {
		dir := filepath.Join(work, name)
		must(t, os.MkdirAll(dir, 0o755))
		if pyproject != "" {
			writeFile(t, dir, "pyproject.toml", pyproject)
		}
		for i := 0; i+1 < len(files); i += 2 {
			writeFile(t, dir, files[i], files[i+1])
		}
		return dir
	}
	base := filepath.Join(work, "base")
	writePrefix(t, base, "3.11")

	tests := []struct {
		name    string
		setup   func() string // returns the path typed
		vars    map[string]string
		env     string // want Resolution.Env ("" with create set: none yet)
		rule    string
		create  string
		wantErr bool
	}{
		{name: "an environment is itself", setup: func() string { return venv(filepath.Join(work, "plain")) }, env: filepath.Join(work, "plain")},
		{name: "uv project: .venv", setup: func() string {
			d := project("uvp", "[project]\nname = \"uvp\"\n", "uv.lock", "version = 1\n")
			uvVenv(filepath.Join(d, ".venv"))
			return d
		}, env: filepath.Join(work, "uvp", ".venv"), rule: "uv project"},
		{name: "uv project: UV_PROJECT_ENVIRONMENT, relative to the project", vars: map[string]string{"UV_PROJECT_ENVIRONMENT": "build/env"}, setup: func() string {
			d := project("uvpe", "[project]\nname = \"uvpe\"\n\n[tool.uv]\npackage = false\n")
			uvVenv(filepath.Join(d, "build", "env"))
			return d
		}, env: filepath.Join(work, "uvpe", "build", "env"), rule: "uv project, UV_PROJECT_ENVIRONMENT"},
		{name: "uv project not synced yet", setup: func() string {
			return project("uvnew", "[project]\nname = \"uvnew\"\n", "uv.lock", "version = 1\n")
		}, rule: "uv project", create: "uv sync"},
		{name: "Poetry project: its hashed env in virtualenvs, picked by envs.toml", setup: func() string {
			d := project("poetryp", "[tool.poetry]\nname = \"Poetry_P\"\nversion = \"0.1.0\"\n", "poetry.lock", "# poetry\n")
			name := managers.PoetryEnvName("poetry-p", d)
			venvs := filepath.Join(home, ".cache", "pypoetry", "virtualenvs")
			venv(filepath.Join(venvs, name+"-py3.10"))
			venv(filepath.Join(venvs, name+"-py3.11"))
			writeFile(t, venvs, "envs.toml", "["+name+"]\nminor = \"3.10\"\npatch = \"3.10.13\"\n")
			return d
		}, env: "poetry:3.10", rule: "Poetry project, envs.toml"},
		{name: "Poetry project: in-project .venv", setup: func() string {
			d := project("poetryin", "[project]\nname = \"poetryin\"\n\n[build-system]\nbuild-backend = \"poetry.core.masonry.api\"\n")
			venv(filepath.Join(d, ".venv"))
			return d
		}, env: filepath.Join(work, "poetryin", ".venv"), rule: "Poetry project, in-project .venv"},
		{name: "pipenv project: its hashed env in WORKON_HOME's default", setup: func() string {
			d := project("pipenvp", "", "Pipfile", "[packages]\ntorch = \"*\"\n")
			venv(filepath.Join(home, ".local", "share", "virtualenvs", managers.PipenvEnvName(d)))
			return d
		}, env: "pipenv", rule: ""},
		{name: "PDM project: .pdm-python names the interpreter", setup: func() string {
			env := venv(filepath.Join(work, "pdmenv"))
			return project("pdmp", "[project]\nname = \"pdmp\"\n\n[tool.pdm]\ndistribution = false\n", ".pdm-python", filepath.Join(env, "bin", "python")+"\n")
		}, env: filepath.Join(work, "pdmenv"), rule: "PDM project, .pdm-python"},
		{name: "hatch project: the default env", setup: func() string {
			d := project("hatchp", "[project]\nname = \"Hatch.P\"\n\n[tool.hatch.envs.default]\ndependencies = [\"torch\"]\n")
			return d
		}, env: "hatch", rule: "hatch project, default environment"},
		{name: "conda environment.yml names its env", setup: func() string {
			must(t, pyenvtest.Write(filepath.Join(home, "miniforge3"), pyenvtest.Spec{Manager: "conda"}))
			must(t, pyenvtest.Write(filepath.Join(home, "miniforge3", "envs", "train"), pyenvtest.Spec{Manager: "conda"}))
			return project("condap", "", "environment.yml", "name: train\nchannels:\n  - pytorch\n  - nvidia\ndependencies:\n  - pytorch\n")
		}, env: filepath.Join(home, "miniforge3", "envs", "train"), rule: "conda environment.yml, name: train"},
		{name: "a plain project with a venv folder", setup: func() string {
			d := project("reqs", "", "requirements.txt", "torch\n")
			venv(filepath.Join(d, "venv"))
			return d
		}, env: filepath.Join(work, "reqs", "venv"), rule: "a venv in the project"},
		{name: "an interpreter in a venv (a link to the base's) is the venv's", setup: func() string {
			v := venv(filepath.Join(work, "linked"))
			py := filepath.Join(v, "bin", "python")
			must(t, os.Remove(py))
			must(t, os.Symlink(filepath.Join(base, "bin", "python3.11"), py))
			return py
		}, env: filepath.Join(work, "linked"), rule: "the environment of this interpreter"},
		{name: "a prefix's interpreter is the prefix", setup: func() string { return filepath.Join(base, "bin", "python3") },
			env: base, rule: "the environment of this interpreter"},
		{name: "a site-packages folder is its environment's", setup: func() string {
			return filepath.Join(venv(filepath.Join(work, "sited")), "lib", "python3.11", "site-packages")
		}, env: filepath.Join(work, "sited"), rule: "the environment this site-packages belongs to"},
		{name: "a folder that is none of these", setup: func() string { return project("nothing", "") }, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clear(envVars)
			for k, v := range tt.vars {
				envVars[k] = v
			}
			path := tt.setup()
			r, err := envsearch.Resolve(path, w)
			if tt.wantErr {
				if !errors.Is(err, pyenv.ErrNotEnv) {
					t.Errorf("Resolve = %+v, %v; want ErrNotEnv", r, err)
				}
				return
			}
			must(t, err)
			want := tt.env
			switch want {
			case "poetry:3.10":
				want = filepath.Join(home, ".cache", "pypoetry", "virtualenvs", managers.PoetryEnvName("poetry-p", filepath.Join(work, "poetryp"))+"-py3.10")
			case "pipenv":
				want = filepath.Join(home, ".local", "share", "virtualenvs", managers.PipenvEnvName(filepath.Join(work, "pipenvp")))
				tt.rule = "pipenv project, " + want
			case "hatch":
				want, tt.create = "", "hatch env create"
			}
			if r.Env != want || tt.rule != "" && r.Rule != tt.rule || r.Create != tt.create {
				t.Errorf("Resolve(%s) = %+v\nwant env %s, rule %q, create %q", path, r, want, tt.rule, tt.create)
			}
			if tt.rule != "" && r.Line() == "" {
				t.Errorf("Line() is empty for a resolved path")
			}
		})
	}
}

// TestResolveHatchDefaultEnv: hatch's default env lies at
// DATA/env/virtual/NAME/ID/NAME, ID hashed from the project's path.
func TestResolveHatchDefaultEnv(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	dir := filepath.Join(work, "proj")
	writeFile(t, dir, "hatch.toml", "[envs.default]\ndependencies = [\"torch\"]\n")
	writeFile(t, dir, "pyproject.toml", "[project]\nname = \"My.Proj\"\nversion = \"0.1\"\n")
	w := managers.Where{Home: home, Getenv: func(string) string { return "" }, System: []string{}}
	r, err := envsearch.Resolve(dir, w)
	must(t, err)
	if r.Env != "" || r.Create != "hatch env create" {
		t.Fatalf("before creating: %+v", r)
	}
	// find the ID hatch would use by looking for where Resolve expects it:
	// create every candidate folder name from the same rule as hatch
	virtual := filepath.Join(home, ".local", "share", "hatch", "env", "virtual", "my-proj")
	must(t, os.MkdirAll(virtual, 0o755))
	// hatch/utils/fs.py: urlsafe_b64encode(sha256(str(path))).decode()[:8]
	id := hatchIDForTest(dir)
	env := filepath.Join(virtual, id, "my-proj")
	must(t, pyenvtest.Write(env, pyenvtest.Spec{}))
	r, err = envsearch.Resolve(dir, w)
	must(t, err)
	if r.Env != env {
		t.Errorf("Resolve = %+v, want %s", r, env)
	}
}

// hatchIDForTest is hatch's Path.id written out again from its source
// (hatch/utils/fs.py long_id: urlsafe_b64encode(sha256(str(path))) [:8]);
// its value for /tmp/disc-names/simple-project, "a-YUHOv6", was computed
// with Python's own hashlib and base64 (the same hash Poetry puts in its
// env names: simple-project-a-YUHOv6).
func hatchIDForTest(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return base64.URLEncoding.EncodeToString(sum[:])[:8]
}

func TestHatchIDForTest(t *testing.T) {
	if got := hatchIDForTest("/tmp/disc-names/simple-project"); got != "a-YUHOv6" {
		t.Errorf("hatch id = %q", got)
	}
}
