package gpu

import "testing"

func TestPCIBusID(t *testing.T) {
	tests := map[string]string{
		"00000000:07:00.0": "0000:07:00.0",
		"00000000:0A:00.0": "0000:0a:00.0",
		"0000:07:00.0":     "0000:07:00.0",     // already short (an old driver's legacy field)
		"00010000:41:00.0": "00010000:41:00.0", // a domain that needs 8 digits is kept
		"":                 "",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			if got := pciBusID(in); got != want {
				t.Errorf("pciBusID(%q) = %q, want %q", in, got, want)
			}
		})
	}
}
