package kb

import "testing"

func TestTagForCUDA(t *testing.T) {
	tests := map[string]string{
		"12.1": "cu121", "11.8": "cu118", "13.0": "cu130", "12.4.1": "cu124", " 12.6 ": "cu126",
		"": "", "x": "", "12": "", "12.10": "", "-1.2": "", "12.x": "",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			if got := TagForCUDA(in); got != want {
				t.Errorf("TagForCUDA(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

func TestCUDAForTag(t *testing.T) {
	tests := []struct {
		tag, want string
		ok        bool
	}{
		{"cu121", "12.1", true},
		{"cu130", "13.0", true},
		{"cu118", "11.8", true},
		{"cu92", "9.2", true},
		{"cpu", "", false},
		{"rocm6.2", "", false},
		{"xpu", "", false},
		{"cuxyz", "", false},
		{"cu1", "", false},
		{"cu1210", "", false},
		{"cu012", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.tag, func(t *testing.T) {
			got, ok := CUDAForTag(tt.tag)
			if got != tt.want || ok != tt.ok {
				t.Errorf("CUDAForTag(%q) = %q, %v; want %q, %v", tt.tag, got, ok, tt.want, tt.ok)
			}
			if ok && TagForCUDA(got) != tt.tag {
				t.Errorf("TagForCUDA(%q) does not give %q back", got, tt.tag)
			}
		})
	}
}

func TestParseTorch(t *testing.T) {
	tests := []struct {
		in, minor, patch string
		ok               bool
	}{
		{"2.5.1", "2.5", "2.5.1", true},
		{"2.5.1+cu121", "2.5", "2.5.1", true},
		{"2.5.0a0+git1234abc", "2.5", "2.5.0", true},
		{"2.10.0.dev20251001+cu128", "2.10", "2.10.0", true},
		{"2.6", "2.6", "2.6.0", true},
		{" 2.7.1 ", "2.7", "2.7.1", true},
		{"1!2.5.1", "", "", false},
		{"2", "", "", false},
		{"garbage", "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v, ok := parseTorch(tt.in)
			if ok != tt.ok || v.minor != tt.minor || v.patch != tt.patch {
				t.Errorf("parseTorch(%q) = %+v, %v", tt.in, v, ok)
			}
		})
	}
}

func TestPublicVersion(t *testing.T) {
	for in, want := range map[string]string{
		"2.5.1+cu121":              "2.5.1",
		"2.5.1":                    "2.5.1",
		"0.20.1+cpu":               "0.20.1",
		"2.10.0.dev20251001+cu128": "2.10.0.dev20251001",
		"2.5.0a0+git1234":          "2.5.0a0",
		"not a version+cu121":      "not a version",
		"not a version":            "not a version",
		"":                         "",
	} {
		t.Run(in, func(t *testing.T) {
			if got := PublicVersion(in); got != want {
				t.Errorf("PublicVersion(%q) = %q, want %q", in, got, want)
			}
		})
	}
}
