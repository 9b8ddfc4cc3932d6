package pyenv

import "testing"

func TestClassifyCondaBuild(t *testing.T) {
	tests := []struct {
		build string
		want  Build
		cuda  string
	}{
		{"py3.11_cuda12.1_cudnn8.9.2_0", BuildCUDA, "12.1"},
		{"py3.10_cuda11.8_cudnn8.7.0_0", BuildCUDA, "11.8"},
		{"cuda126_generic_py312_h1234567_201", BuildCUDA, "12.6"},
		{"cuda120_py311h0123456_300", BuildCUDA, "12.0"},
		{"py3.11_cpu_0", BuildCPU, ""},
		{"cpu_generic_py311_h1234567_0", BuildCPU, ""},
		{"py3.11_rocm6.2_0", BuildROCm, ""},
		{"h955ad1f_0", BuildUnknown, ""},
	}
	for _, tt := range tests {
		t.Run(tt.build, func(t *testing.T) {
			if b, c := classifyCondaBuild(tt.build); b != tt.want || c != tt.cuda {
				t.Errorf("got %s %q, want %s %q", b, c, tt.want, tt.cuda)
			}
		})
	}
}

func TestClassifyLocalTag(t *testing.T) {
	tests := []struct {
		version string
		want    Build
		detail  string
	}{
		{"2.5.1+cu121", BuildCUDA, "12.1"},
		{"2.9.0+cu130", BuildCUDA, "13.0"},
		{"1.7.1+cu92", BuildCUDA, "9.2"},
		{"2.10.0.dev20251001+cu128", BuildCUDA, "12.8"},
		{"2.5.1+cpu", BuildCPU, ""},
		{"2.5.1+cpu.cxx11.abi", BuildCPU, ""},
		{"2.5.1+rocm6.2.4", BuildROCm, "6.2.4"},
		{"2.7.0+xpu", BuildXPU, ""},
		{"2.5.1", BuildUnknown, ""},
		{"2.5.1+cuda", BuildUnknown, ""},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			if b, d := classifyLocalTag(tt.version); b != tt.want || d != tt.detail {
				t.Errorf("got %s %q, want %s %q", b, d, tt.want, tt.detail)
			}
		})
	}
}

func TestStashOwner(t *testing.T) {
	for entry, want := range map[string]string{
		"~orch": Torch, "~-rch": Torch, "~orch-2.5.1+cu121.dist-info": Torch, "~orchvision": TorchVision,
		"~lama_cpp": LlamaCppPython, "~itsandbytes-0.45.0.dist-info": BitsAndBytes, "~ip": "", "~": "",
	} {
		if got := stashOwner(entry); got != want {
			t.Errorf("stashOwner(%q) = %q, want %q", entry, got, want)
		}
	}
}

func TestParseCondaRecord(t *testing.T) {
	r, ok := parseCondaRecord("pytorch-cuda-12.1-ha16c6d3_6.json")
	if !ok || r.name != "pytorch-cuda" || r.version != "12.1" || r.build != "ha16c6d3_6" {
		t.Errorf("got %+v %v", r, ok)
	}
	if _, ok := parseCondaRecord("history"); ok {
		t.Error("history parsed as a record")
	}
}
