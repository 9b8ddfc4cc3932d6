package pyspec_test

import (
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"
)

// TestEval is the marker evaluator against the markers torch and its
// dependencies write, and the corners of PEP 508: operators, both quote
// styles, parentheses, version and string comparison, and three-valued
// logic where a variable is unknown.
func TestEval(t *testing.T) {
	linux := pyspec.Env{"os_name": "posix", "sys_platform": "linux", "platform_system": "Linux",
		"platform_machine": "x86_64", "python_version": "3.11", "extra": ""}
	windows := pyspec.Env{"os_name": "nt", "sys_platform": "win32", "platform_system": "Windows",
		"platform_machine": "AMD64", "python_version": "3.12", "extra": ""}
	arm := pyspec.Env{"platform_system": "Linux", "platform_machine": "aarch64", "python_version": "3.11", "extra": ""}
	noPython := pyspec.Env{"platform_system": "Linux", "platform_machine": "x86_64", "extra": ""}
	const (
		yes     = "applies"
		no      = "does not apply"
		unknown = "unknown"
	)
	tests := []struct {
		marker string
		env    pyspec.Env
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
		{`platform_system == "Linux" and platform_machine == "x86_64" and python_version < "3.13"`, pyspec.Env{"platform_system": "Linux", "platform_machine": "x86_64", "python_version": "3.13"}, no},
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
		applies, known := pyspec.Eval(tt.marker, tt.env)
		got := unknown
		switch {
		case known && applies:
			got = yes
		case known:
			got = no
		}
		if got != tt.want {
			t.Errorf("Eval(%s) in %v = %s, want %s", tt.marker, tt.env, got, tt.want)
		}
	}
}
