package pyspec_test

import (
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"
)

// TestParseRequirement: the Requires-Dist forms torch and others write.
func TestParseRequirement(t *testing.T) {
	tests := []struct {
		in   string
		want pyspec.Requirement
		ok   bool
	}{
		{`nvidia-cublas-cu12==12.4.5.8; platform_system == "Linux" and platform_machine == "x86_64"`,
			pyspec.Requirement{Name: "nvidia-cublas-cu12", Specifier: "==12.4.5.8", Marker: `platform_system == "Linux" and platform_machine == "x86_64"`}, true},
		{`Nvidia_CUDNN.cu12 (==9.1.0.70) ; platform_system == 'Linux'`,
			pyspec.Requirement{Name: "nvidia-cudnn-cu12", Specifier: "==9.1.0.70", Marker: `platform_system == 'Linux'`}, true},
		{`typing-extensions>=4.8.0`, pyspec.Requirement{Name: "typing-extensions", Specifier: ">=4.8.0"}, true},
		{`filelock`, pyspec.Requirement{Name: "filelock"}, true},
		{`torch<3,>=2.0`, pyspec.Requirement{Name: "torch", Specifier: "<3,>=2.0"}, true},
		{`opt-einsum>=3.3; extra == "opt-einsum"`, pyspec.Requirement{Name: "opt-einsum", Specifier: ">=3.3", Marker: `extra == "opt-einsum"`}, true},
		{`requests[security,socks] >= 2.8.1 ; python_version < "2.7"`, pyspec.Requirement{Name: "requests", Specifier: ">= 2.8.1", Marker: `python_version < "2.7"`}, true},
		{`pip @ https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee ; python_version >= "3"`, pyspec.Requirement{Name: "pip", Marker: `python_version >= "3"`}, true},
		{`==1.0`, pyspec.Requirement{}, false},
		{`name[extra`, pyspec.Requirement{Name: "name"}, false},
	}
	for _, tt := range tests {
		got, ok := pyspec.ParseRequirement(tt.in)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("ParseRequirement(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
