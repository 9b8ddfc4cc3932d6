package health

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestPackageInstallBroken: the damaged files of a package other than
// torch are PACKAGE_INSTALL_BROKEN, never torch's TORCH_INSTALL_BROKEN,
// which scripts filter on: an error when files it loads are gone, a
// warning when only its metadata is. A llama-cpp-python with no library
// at all is that, not LLAMA_CPP_CPU_BUILD: it is no CPU build, it does
// not load.
func TestPackageInstallBroken(t *testing.T) {
	cuda := &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip"}
	llama := &pyenvtest.Llama{Version: "0.3.8", Backends: []string{"cpu"}}
	sitePackages := func(root string) string { return filepath.Join(root, "lib", "python3.11", "site-packages") }
	for _, tc := range []struct {
		name   string
		spec   pyenvtest.Spec
		gpu    gpu.State
		damage func(sp string) error
		want   want
	}{
		{name: "llama-cpp-python without its libraries", spec: pyenvtest.Spec{Llama: llama}, gpu: a100Driver550,
			damage: func(sp string) error { return os.RemoveAll(filepath.Join(sp, "llama_cpp", "lib")) },
			want: want{code: finding.CodePackageInstallBroken, severity: finding.SeverityError, message: "llama-cpp-python: llama_cpp holds no libllama or ggml library",
				fix: "ENV/bin/python -m pip install --force-reinstall --no-deps llama-cpp-python==0.3.8 --index-url https://abetlen.github.io/llama-cpp-python/whl/cu124"}},
		{name: "llama-cpp-python without its libraries, no GPU", spec: pyenvtest.Spec{Llama: llama}, gpu: noDriver,
			damage: func(sp string) error { return os.RemoveAll(filepath.Join(sp, "llama_cpp", "lib")) },
			want:   want{code: finding.CodePackageInstallBroken, severity: finding.SeverityError, message: "reinstall llama-cpp-python", nofix: true}},
		{name: "llama-cpp-python's dist-info without its llama_cpp folder", spec: pyenvtest.Spec{Llama: llama}, gpu: a100Driver550,
			damage: func(sp string) error { return os.RemoveAll(filepath.Join(sp, "llama_cpp")) },
			want: want{code: finding.CodePackageInstallBroken, severity: finding.SeverityError, message: "llama-cpp-python: no llama_cpp folder beside its dist-info, so there is no libllama or ggml library and import llama_cpp fails",
				fix: "ENV/bin/python -m pip install --force-reinstall --no-deps llama-cpp-python==0.3.8 --index-url https://abetlen.github.io/llama-cpp-python/whl/cu124"}},
		{name: "llama-cpp-python's dist-info without its llama_cpp folder, no GPU", spec: pyenvtest.Spec{Llama: llama}, gpu: noDriver,
			damage: func(sp string) error { return os.RemoveAll(filepath.Join(sp, "llama_cpp")) },
			want:   want{code: finding.CodePackageInstallBroken, severity: finding.SeverityError, message: "import llama_cpp fails", nofix: true}},
		{name: "an editable llama-cpp-python whose code is not found", spec: pyenvtest.Spec{Llama: llama}, gpu: a100Driver550,
			damage: func(sp string) error {
				if err := os.RemoveAll(filepath.Join(sp, "llama_cpp")); err != nil {
					return err
				}
				return os.WriteFile(filepath.Join(sp, "llama_cpp_python-0.3.8.dist-info", "direct_url.json"), []byte(`{"dir_info": {"editable": true}, "url": "file:///src/llama-cpp-python"}`), 0o644)
			},
			want: want{code: finding.CodePackageInstallBroken, severity: finding.SeverityWarning, nofix: true,
				message: "llama-cpp-python: an editable install of " + filepath.FromSlash("/src/llama-cpp-python") + " whose llama_cpp folder GPU Canary did not find on the import path, so no libllama or ggml library was found and its backends are not known"}},
		{name: "torchvision without its version.py", spec: pyenvtest.Spec{Torch: cuda, Vision: &pyenvtest.Companion{Version: "0.20.1+cu121", CUDA: "12.1"}}, gpu: a100Driver550,
			damage: func(sp string) error { return os.Remove(filepath.Join(sp, "torchvision", "version.py")) },
			want:   want{code: finding.CodePackageInstallBroken, severity: finding.SeverityError, message: "torchvision: torchvision/version.py is missing", nofix: true}},
		{name: "bitsandbytes without its dist-info", spec: pyenvtest.Spec{Torch: cuda, BNB: &pyenvtest.BNB{Version: "0.45.0", CUDALibs: []string{"121"}}}, gpu: a100Driver550,
			damage: func(sp string) error { return os.RemoveAll(filepath.Join(sp, "bitsandbytes-0.45.0.dist-info")) },
			want:   want{code: finding.CodePackageInstallBroken, severity: finding.SeverityWarning, message: "bitsandbytes: ", nofix: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "env")
			if err := pyenvtest.Write(root, tc.spec); err != nil {
				t.Fatal(err)
			}
			if err := tc.damage(sitePackages(root)); err != nil {
				t.Fatal(err)
			}
			env, err := pyenv.Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			var got []finding.Finding
			for _, f := range CheckEnv(env, tc.gpu, Options{}) {
				switch f.Code {
				case finding.CodeTorchInstallBroken, finding.CodeLlamaCPPCPUBuild:
					t.Errorf("%s raised for another package's files: %s", f.Code, f.Message)
				case tc.want.code:
					got = append(got, f)
				}
			}
			if len(got) != 1 {
				t.Fatalf("%d %s findings, want 1:\n%s", len(got), tc.want.code, dump(CheckEnv(env, tc.gpu, Options{})))
			}
			f, w := got[0], tc.want
			if f.Severity != w.severity || !strings.Contains(f.Message, w.message) {
				t.Errorf("%s/%s %q, want %s holding %q", f.Code, f.Severity, f.Message, w.severity, w.message)
			}
			if wantFix := strings.ReplaceAll(w.fix, "ENV", env.Path); f.Fix != wantFix {
				t.Errorf("fix %q, want %q", f.Fix, wantFix)
			}
		})
	}
}

// TestLlamaWithNoLibraryIsNeverSilent: a llama-cpp-python with no
// backend read and no problem to say why (an Env not read by pyenv) is a
// warning that its backends are not known, never LLAMA_CPP_CPU_BUILD's
// "built for the CPU only", which is no finding to a script on a machine
// without a GPU.
func TestLlamaWithNoLibraryIsNeverSilent(t *testing.T) {
	env := &pyenv.Env{Path: t.TempDir(), Packages: map[string]*pyenv.Package{pyenv.LlamaCppPython: {Version: "0.3.8", Build: pyenv.BuildUnknown}}}
	for _, g := range []gpu.State{a100Driver550, noDriver} {
		fs := CheckEnv(env, g, Options{})
		if len(fs) != 1 || fs[0].Code != finding.CodePackageInstallBroken || fs[0].Severity != finding.SeverityWarning || !strings.Contains(fs[0].Message, "no libllama or ggml library was found") {
			t.Errorf("GPU %q: findings\n%s", g.Driver, dump(fs))
		}
	}
}
