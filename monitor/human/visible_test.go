package human

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestVisible(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain text is kept", "/home/ana/llm/.venv", "/home/ana/llm/.venv"},
		{"non-ASCII letters are kept", "/home/zoë/模型/.venv", "/home/zoë/模型/.venv"},
		{"emoji with a joiner is kept", "👩‍🔬", "👩‍🔬"},
		{"a backslash is kept", `C:\Users\ana\.venv`, `C:\Users\ana\.venv`},
		{"OSC title", "\x1b]0;pwned\x07python", `\x1b]0;pwned\x07python`},
		{"clear screen", "\x1b[2Jtrain.py", `\x1b[2Jtrain.py`},
		{"tab, newline, return by name", "a\tb\nc\rd", `a\tb\nc\rd`},
		{"NUL and DEL", "a\x00b\x7fc", `a\x00b\x7fc`},
		{"C1 CSI", "a\u009b2Jb", `a\u009b2Jb`},
		{"right-to-left override", "evil\u202etxt.exe", `evil\u202etxt.exe`},
		{"isolates and marks", "\u2066x\u2069\u200f", `\u2066x\u2069\u200f`},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"bytes that are not UTF-8", "caf\xe9/\xff", `caf\xe9/\xff`},
		{"a truncated rune", "ok\xe6\xa8", `ok\xe6\xa8`},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Visible(tc.in); got != tc.want {
				t.Errorf("Visible(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzVisible: whatever the input, the output is valid UTF-8 holding no
// control character, no bidi control and no C1, and text without any is
// returned unchanged.
func FuzzVisible(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]0;x\x07", "caf\xe9", "\u202e", "\u009b", "a\u2029"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Visible(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Visible(%q) = %q is not UTF-8", s, got)
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f || unsafeRune(r) {
				t.Fatalf("Visible(%q) = %q holds %U", s, got, r)
			}
		}
		if firstUnsafe(s, false) < 0 && got != s {
			t.Fatalf("safe text %q changed to %q", s, got)
		}
		if firstUnsafe(s, false) >= 0 && !strings.Contains(got, `\`) {
			t.Fatalf("unsafe text %q shown as %q with no escape", s, got)
		}
	})
}

func TestWriter(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	n, err := w.Write([]byte("Plan for /srv/evil\x1b[2J\u202e/.venv\n\tcol\n"))
	if err != nil || n != len("Plan for /srv/evil\x1b[2J\u202e/.venv\n\tcol\n") {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if want := "Plan for /srv/evil\\x1b[2J\\u202e/.venv\n\tcol\n"; b.String() != want {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}
}
