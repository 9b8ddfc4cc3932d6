package pyenv_test

import (
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// TestEvalMarker is the marker evaluator against the markers torch and its
// dependencies write, and the corners of PEP 508: operators, both quote
// styles, parentheses, version and string comparison, and three-valued
// logic where a variable is unknown.
func TestEvalMarker(t *testing.T) {
	linux := pyenv.MarkerEnv{"os_name": "posix", "sys_platform": "linux", "platform_system": "Linux",
		"platform_machine": "x86_64", "python_version": "3.11", "extra": ""}
	windows := pyenv.MarkerEnv{"os_name": "nt", "sys_platform": "win32", "platform_system": "Windows",
		"platform_machine": "AMD64", "python_version": "3.12", "extra": ""}
	arm := pyenv.MarkerEnv{"platform_system": "Linux", "platform_machine": "aarch64", "python_version": "3.11", "extra": ""}
	noPython := pyenv.MarkerEnv{"platform_system": "Linux", "platform_machine": "x86_64", "extra": ""}
	const (
		yes     = "applies"
		no      = "does not apply"
		unknown = "unknown"
	)
	tests := []struct {
		marker string
		env    pyenv.MarkerEnv
		want   string
	}{
		{``, linux, yes},
		{`   `, linux, yes},
		// torch's own markers, in both quote styles (METADATA writes double, the build script single)
		{`platform_system == "Linux" and platform_machine == "x86_64"`, linux, yes},
		{`platform_system == 'Linux' and platform_machine == 'x86_64'`, linux, yes},
		{`platform_system == "Linux" and platform_machine == "x86_64"`, windows, no},
		{`platform_system == "Linux" and platform_machine == "x86_64"`, arm, no},
		{`platform_system == "Linux" and platform_machine == "x86_64" and python_version < "3.13"`, linux, yes},
		{`platform_system == "Linux" and platform_machine == "x86_64" and python_version < "3.13"`, pyenv.MarkerEnv{"platform_system": "Linux", "platform_machine": "x86_64", "python_version": "3.13"}, no},
		{`python_version >= "3.9"`, linux, yes},
		{`python_version >= "3.12"`, linux, no},
		{`extra == "opt-einsum"`, linux, no},
		{`extra != "opt-einsum"`, linux, yes},
		// version comparison, not string: "3.9" < "3.11" as versions
		{`python_version > "3.9"`, linux, yes},
		{`python_version < "3.9"`, linux, no},
		{`python_version <= "3.11"`, linux, yes},
		{`python_version != "3.11"`, linux, no},
		{`python_version ~= "3.10"`, linux, yes},
		{`python_version == "3.*"`, linux, yes},
		{`python_version === "3.11"`, linux, yes},
		{`"3.8" < python_version`, linux, yes},
		// string comparison where the right side is no version
		{`sys_platform == "linux"`, linux, yes},
		{`os_name == "nt"`, windows, yes},
		{`platform_machine != "aarch64"`, linux, yes},
		{`"linux" in sys_platform`, linux, yes},
		{`sys_platform in "linux darwin"`, linux, yes},
		{`sys_platform not in "linux darwin"`, windows, yes},
		{`platform_machine not in 'x86_64 AMD64'`, linux, no},
		{`platform_machine ~= "x86"`, linux, unknown},
		// parentheses and precedence: and binds tighter than or
		{`(platform_system == "Linux" or platform_system == "Windows") and python_version >= "3.9"`, windows, yes},
		{`platform_system == "Darwin" or platform_system == "Linux" and platform_machine == "x86_64"`, linux, yes},
		{`platform_system == "Darwin" or platform_system == "Linux" and platform_machine == "x86_64"`, arm, no},
		{`((python_version >= "3.9"))`, linux, yes},
		{`(sys_platform == "win32" or (sys_platform == "linux" and platform_machine == "aarch64"))`, linux, no},
		// legacy dotted names
		{`sys.platform == "linux"`, linux, yes},
		{`os.name == "posix"`, linux, yes},
		// unknown variables: three-valued logic
		{`platform_release >= "5.0"`, linux, unknown},
		{`implementation_name == "cpython"`, linux, unknown},
		{`platform_system == "Windows" and implementation_name == "cpython"`, linux, no},
		{`platform_system == "Linux" and implementation_name == "cpython"`, linux, unknown},
		{`platform_system == "Linux" or implementation_name == "cpython"`, linux, yes},
		{`python_version < "3.13"`, noPython, unknown},
		// python_full_version: only python_version is known
		{`python_full_version >= "3.8.1"`, linux, yes},
		{`python_full_version < "3.13.0"`, linux, yes},
		{`python_full_version >= "3.11.4"`, linux, unknown},
		{`python_full_version == "3.11.*"`, linux, unknown},
		{`"3.12.1" > python_full_version`, linux, yes},
		// what no marker can be
		{`platform_system = "Linux"`, linux, unknown},
		{`platform_system == "Linux`, linux, unknown},
		{`platform_system == "Linux" and`, linux, unknown},
		{`(platform_system == "Linux"`, linux, unknown},
		{`platform_system == "Linux")`, linux, unknown},
		{`platform_system "Linux"`, linux, unknown},
		{`platform_os == "Linux"`, linux, unknown},
		{`platform_system is "Linux"`, linux, unknown},
		{`platform_system not "Linux"`, linux, unknown},
		{`platform_system == "Linux" && platform_machine == "x86_64"`, linux, unknown},
		{`python_version >= 3.9`, linux, unknown},
	}
	for _, tt := range tests {
		applies, known := pyenv.EvalMarker(tt.marker, tt.env)
		got := unknown
		switch {
		case known && applies:
			got = yes
		case known:
			got = no
		}
		if got != tt.want {
			t.Errorf("EvalMarker(%s) in %v = %s, want %s", tt.marker, tt.env, got, tt.want)
		}
	}
}

// TestParseRequirement: the Requires-Dist forms torch and others write.
func TestParseRequirement(t *testing.T) {
	tests := []struct {
		in   string
		want pyenv.Requirement
		ok   bool
	}{
		{`nvidia-cublas-cu12==12.4.5.8; platform_system == "Linux" and platform_machine == "x86_64"`,
			pyenv.Requirement{Name: "nvidia-cublas-cu12", Specifier: "==12.4.5.8", Marker: `platform_system == "Linux" and platform_machine == "x86_64"`}, true},
		{`Nvidia_CUDNN.cu12 (==9.1.0.70) ; platform_system == 'Linux'`,
			pyenv.Requirement{Name: "nvidia-cudnn-cu12", Specifier: "==9.1.0.70", Marker: `platform_system == 'Linux'`}, true},
		{`typing-extensions>=4.8.0`, pyenv.Requirement{Name: "typing-extensions", Specifier: ">=4.8.0"}, true},
		{`filelock`, pyenv.Requirement{Name: "filelock"}, true},
		{`torch<3,>=2.0`, pyenv.Requirement{Name: "torch", Specifier: "<3,>=2.0"}, true},
		{`opt-einsum>=3.3; extra == "opt-einsum"`, pyenv.Requirement{Name: "opt-einsum", Specifier: ">=3.3", Marker: `extra == "opt-einsum"`}, true},
		{`requests[security,socks] >= 2.8.1 ; python_version < "2.7"`, pyenv.Requirement{Name: "requests", Specifier: ">= 2.8.1", Marker: `python_version < "2.7"`}, true},
		{`pip @ https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee ; python_version >= "3"`, pyenv.Requirement{Name: "pip", Marker: `python_version >= "3"`}, true},
		{`==1.0`, pyenv.Requirement{}, false},
		{`name[extra`, pyenv.Requirement{Name: "name"}, false},
	}
	for _, tt := range tests {
		got, ok := pyenv.ParseRequirement(tt.in)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("ParseRequirement(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
