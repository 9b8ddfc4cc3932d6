package shell

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestPOSIXQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "''"},
		{"/home/ana/llm/.venv", "/home/ana/llm/.venv"},
		{"torch==2.5.1+cu124", "torch==2.5.1+cu124"},
		{"https://download.pytorch.org/whl/cu124", "https://download.pytorch.org/whl/cu124"},
		{"a,b@c%d", "a,b@c%d"},
		{"/home/ana/my env", "'/home/ana/my env'"},
		{`it's`, `'it'\''s'`},
		{`say "hi"`, `'say "hi"'`},
		{"$HOME", "'$HOME'"},
		{"a;b", "'a;b'"},
		{"naïve", "'naïve'"},
		{"line\nbreak", "'line\nbreak'"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := POSIX.Quote(tc.in); got != tc.want {
				t.Errorf("POSIX.Quote(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestJoinPastesBack hands Join's line to a real POSIX shell and reads the
// words it splits it into: they are the arguments that went in.
func TestJoinPastesBack(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	argv := []string{"/opt/my env/bin/python", "-m", "pip", `it's "quoted"`, "", "$HOME", "a;b|c&d", "tab\there", "x==1+cu124"}
	out, err := exec.Command(sh, "-c", `for a in `+POSIX.Join(argv)+`; do printf '%s\0' "$a"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if !slices.Equal(got, argv) {
		t.Errorf("the shell read %q from %s, want %q", got, POSIX.Join(argv), argv)
	}
}
