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
		// A character a terminal acts on: $'…' with escapes, shown as text.
		{"line\nbreak", `$'line\nbreak'`},
		{"tab\there", `$'tab\there'`},
		{"/home/ana/evil\x1b[2J/.venv", `$'/home/ana/evil\x1b[2J/.venv'`},
		{"\x1bb", `$'\033b'`},
		{"it's\x7f", `$'it\'s\x7f'`},
		{`C:\dir` + "\r", `$'C:\\dir\r'`},
		{"caf\xe9", `$'caf\xe9'`},
		{"csi\u009b2J", `$'csi\xc2\2332J'`},
		{"evil\u202egnp.exe", `$'evil\xe2\x80\xaegnp.exe'`},
		{"$HOME\x01`x`\"", "$'$HOME\\x01`x`\"'"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := POSIX.Quote(tc.in); got != tc.want {
				t.Errorf("POSIX.Quote(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// hostileWords are arguments a fix command may have to carry: the
// environment's path is whatever the disk holds.
var hostileWords = []string{
	"/home/ana/evil\x1b[2J\x1b]0;owned\x07/.venv", "line\nbreak", "tab\there", "cr\r", "bell\x07", "del\x7f",
	"\x1bb", "\x1b1", `it's "quoted"`, `back\slash`, `\x1b\`, "'\x1b'", "$HOME", "$(id)", "`id`", "a;b|c&d",
	"caf\xe9", "\xff\xfe", "\xed\xa0\x80", "csi\u009b2J", "evil\u202egnp.exe", "sep\u2028x", "naïve", "环境", "",
	"/opt/my env/bin/python", "x==1+cu124",
}

// TestJoinPastesBack hands Join's line to a real shell and reads the
// words it splits it into: they are the arguments that went in, byte for
// byte. bash reads every word; sh (dash on Debian, which has no $'…')
// those that need no escapes.
func TestJoinPastesBack(t *testing.T) {
	for _, sh := range []string{"bash", "sh"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			t.Logf("no %s", sh)
			continue
		}
		var argv []string
		for _, w := range hostileWords {
			if sh == "bash" || !needsEscapes(w) {
				argv = append(argv, w)
			}
		}
		line := POSIX.Join(argv)
		out, err := exec.Command(path, "-c", `for a in `+line+`; do printf '%s\0' "$a"; done`).Output()
		if err != nil {
			t.Fatalf("%s: %v", sh, err)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if !slices.Equal(got, argv) {
			t.Errorf("%s read %q from %s, want %q", sh, got, line, argv)
		}
	}
}

// TestQuotedIsTextAndPastesBack: each hostile word, quoted, is text (no
// character a terminal acts on: what human.Visible shows unchanged) and
// bash's printf writes back exactly its bytes.
func TestQuotedIsTextAndPastesBack(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, w := range hostileWords {
		q := POSIX.Quote(w)
		if needsEscapes(q) {
			t.Errorf("Quote(%q) = %q holds characters a terminal acts on", w, q)
		}
		out, err := exec.Command(bash, "-c", "printf %s "+q).Output()
		if err != nil {
			t.Fatalf("bash -c 'printf %%s %s': %v", q, err)
		}
		if string(out) != w {
			t.Errorf("bash printed %q for %s, want %q", out, q, w)
		}
	}
}
