package shell

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPowerShellQuote is the golden quoting of hostile Windows paths and
// arguments for PowerShell.
func TestPowerShellQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `""`},
		{`C:\Users\ana\llm\.venv\Scripts\python.exe`, `C:\Users\ana\llm\.venv\Scripts\python.exe`},
		{"torch==2.5.1+cu124", "torch==2.5.1+cu124"},
		{"https://download.pytorch.org/whl/cu124", "https://download.pytorch.org/whl/cu124"},
		{"--force-reinstall", "--force-reinstall"},
		{"-m", "-m"},
		{`C:\Users\me\my proj\.venv\Scripts\python.exe`, `"C:\Users\me\my proj\.venv\Scripts\python.exe"`},
		{`C:\Users\$env:USERNAME\x`, "\"C:\\Users\\`$env:USERNAME\\x\""},
		{"C:\\tick`s\\x", "\"C:\\tick``s\\x\""},
		{`C:\R&D\env`, `"C:\R&D\env"`},
		{`C:\Users\O'Brien\env`, `"C:\Users\O'Brien\env"`},
		{`C:\100%\env`, `"C:\100%\env"`},
		{`C:\Users\José\环境\.venv`, `"C:\Users\José\环境\.venv"`},
		{`say "hi"`, "\"say `\"hi`\"\""},
		{"“smart” „quotes“", "\"`“smart`” `„quotes`“\""},
		{"a,b", `"a,b"`},
		{"a;b", `"a;b"`},
		{"@args", `"@args"`},
		{"#comment", `"#comment"`},
		{"(x)", `"(x)"`},
		{"{x}", `"{x}"`},
		{"a|b>c<d", `"a|b>c<d"`},
		{"0x10", `"0x10"`},
		{"12.4", `"12.4"`},
		{"-3", "-3"},
		{"-03", `"-03"`},
		{"-1kb", `"-1kb"`},
		{"1", `"1"`},
		{"--%", `"--%"`},
		{"--", `"--"`},
		{`.\x.ps1`, `".\x.ps1"`},
		// Characters a terminal acts on: backtick escapes PowerShell 5.1
		// has, else $([char]0x…) (`e is PowerShell 6+).
		{"tab\there", "\"tab`there\""},
		{"line\nbreak\r", "\"line`nbreak`r\""},
		{"nul\x00bell\x07bs\bff\fvt\v", "\"nul`0bell`abs`bff`fvt`v\""},
		{"C:\\evil\x1b[2J\\.venv", "\"C:\\evil$([char]0x1b)[2J\\.venv\""},
		{"del\x7f", "\"del$([char]0x7f)\""},
		{"csi\u009b2J", "\"csi$([char]0x9b)2J\""},
		{"evil\u202egnp.exe", "\"evil$([char]0x202e)gnp.exe\""},
		{"sep\u2028x", "\"sep$([char]0x2028)x\""},
		{"$x\x1b`", "\"`$x$([char]0x1b)``\""},
		{"\"\x1b\"", "\"`\"$([char]0x1b)`\"\""},
		// An unpaired surrogate from a Windows name (Go reads it as WTF-8).
		{"lone\xed\xa0\x80", "\"lone$([char]0xd800)\""},
		// A byte that is not UTF-8 (no Windows name holds one).
		{"caf\xe9", "\"caf$([char]0xe9)\""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := PowerShell.Quote(tc.in); got != tc.want {
				t.Errorf("PowerShell.Quote(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

// TestPowerShellJoin: a quoted program needs the call operator; a bare
// one does not.
func TestPowerShellJoin(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{`C:\Users\me\my proj\.venv\Scripts\python.exe`, "-m", "pip", "install", "--force-reinstall", "--no-deps", "torch==2.5.1+cu124", "--index-url", "https://download.pytorch.org/whl/cu124"},
			`& "C:\Users\me\my proj\.venv\Scripts\python.exe" -m pip install --force-reinstall --no-deps torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124`},
		{[]string{`C:\Users\me\proj\.venv\Scripts\python.exe`, "-m", "pip", "install", "torch==2.5.1+cu124"},
			`C:\Users\me\proj\.venv\Scripts\python.exe -m pip install torch==2.5.1+cu124`},
		{[]string{"py", "-3", "-m", "pip", "--python", `C:\Users\me\$proj\.venv\Scripts\python.exe`},
			"py -3 -m pip --python \"C:\\Users\\me\\`$proj\\.venv\\Scripts\\python.exe\""},
		{[]string{`C:\Program Files\uv\uv.exe`, "pip", "install", "--python", `C:\R&D\.venv`},
			`& "C:\Program Files\uv\uv.exe" pip install --python "C:\R&D\.venv"`},
		{nil, ""},
	} {
		if got := PowerShell.Join(tc.argv); got != tc.want {
			t.Errorf("PowerShell.Join(%q)\n got %s\nwant %s", tc.argv, got, tc.want)
		}
		if tc.argv != nil {
			if got := psParse(t, PowerShell.Join(tc.argv)); !slices.Equal(got, tc.argv) {
				t.Errorf("PowerShell reads %q back, want %q", got, tc.argv)
			}
		}
	}
	if got, want := PowerShellScript(`C:\my env\Scripts\Activate.ps1`), `& "C:\my env\Scripts\Activate.ps1"`; got != want {
		t.Errorf("PowerShellScript = %s, want %s", got, want)
	}
	if got, want := PowerShellScript(`C:\env\Scripts\Activate.ps1`), `& "C:\env\Scripts\Activate.ps1"`; got != want {
		t.Errorf("PowerShellScript of a plain path = %s, want %s (always quoted)", got, want)
	}
}

// TestWithEnv: an environment variable for one command, in each dialect.
func TestWithEnv(t *testing.T) {
	argv := []string{`C:\my env\Scripts\python.exe`, "-m", "pip", "install", "llama-cpp-python==0.3.2"}
	if got, want := PowerShell.WithEnv("CMAKE_ARGS", "-DGGML_CUDA=on", argv),
		`$env:CMAKE_ARGS = "-DGGML_CUDA=on"; & "C:\my env\Scripts\python.exe" -m pip install llama-cpp-python==0.3.2`; got != want {
		t.Errorf("PowerShell.WithEnv = %s, want %s", got, want)
	}
	if got, want := POSIX.WithEnv("CMAKE_ARGS", "-DGGML_CUDA=on", []string{"/my env/bin/python", "-m", "pip"}),
		`CMAKE_ARGS=-DGGML_CUDA=on '/my env/bin/python' -m pip`; got != want {
		t.Errorf("POSIX.WithEnv = %s, want %s", got, want)
	}
}

// psParse reads a command line the way PowerShell's tokenizer reads the
// two forms Join writes (about_Parsing, about_Quoting_Rules, the language
// specification's §2.3.5.2 for expandable strings): an optional call
// operator, then words separated by spaces; a word is either bare
// (argument mode, where any of PowerShell's metacharacters would end it
// or change its meaning) or a double-quoted string, in which a backtick
// takes the next character literally and an unescaped $ would expand (a
// failure here) and an unescaped double quote of any of PowerShell's
// four kinds would end the string.
//
// No PowerShell can be installed on this build machine (Debian has no
// package; the npm and .deb installers download from GitHub, which is
// not reachable), so this is the check on Linux; docs/testing.md.
func psParse(t *testing.T, line string) []string {
	t.Helper()
	line = strings.TrimPrefix(line, "& ")
	var words []string
	dquotes := "\"\u201c\u201d\u201e"
	for len(line) > 0 {
		if line[0] == ' ' {
			line = line[1:]
			continue
		}
		if line[0] != '"' {
			end := strings.IndexByte(line, ' ')
			if end < 0 {
				end = len(line)
			}
			w := line[:end]
			if strings.ContainsAny(w, "`$\"'@#,;(){}|&<>%\u201c\u201d\u201e\u2018\u2019") || !psBare(w) {
				t.Fatalf("bare word %q holds a character PowerShell reads", w)
			}
			words = append(words, w)
			line = line[end:]
			continue
		}
		var b strings.Builder
		i := 1
		closed := false
		for i < len(line) {
			r, n := utf8.DecodeRuneInString(line[i:])
			switch {
			case r == '`':
				r2, n2 := utf8.DecodeRuneInString(line[i+n:])
				if r2 == 'e' || r2 == 'u' {
					t.Fatalf("`%c in %q is PowerShell 6 and later", r2, line)
				}
				if c, ok := psBacktick[r2]; ok {
					r2 = c
				}
				b.WriteRune(r2)
				i += n + n2
				continue
			case r == '$':
				m := psChar.FindStringSubmatch(line[i:])
				if m == nil {
					t.Fatalf("unescaped $ in %q would expand", line)
				}
				c, _ := strconv.ParseUint(m[1], 16, 16)
				if c >= 0xd800 && c <= 0xdfff {
					// A surrogate alone: the WTF-8 Go reads it as on Windows.
					b.Write([]byte{0xed, byte(0x80 | c>>6&0x3f), byte(0x80 | c&0x3f)})
				} else {
					b.WriteRune(rune(c))
				}
				i += len(m[0])
				continue
			case strings.ContainsRune(dquotes, r):
				if i+n < len(line) && line[i+n] == line[i] && r == '"' {
					t.Fatalf("a doubled quote in %q is left to PowerShell's rule for \"\"", line)
				}
				closed = true
			}
			i += n
			if closed {
				break
			}
			b.WriteRune(r)
		}
		if !closed {
			t.Fatalf("unterminated string in %q", line)
		}
		words = append(words, b.String())
		line = line[i:]
		if len(line) > 0 && line[0] != ' ' {
			t.Fatalf("a string is followed by %q without a space: PowerShell would join them", line)
		}
	}
	return words
}

// psBacktick are the backtick escapes of PowerShell 5.1's double-quoted
// strings (about_Special_Characters); any other character after a
// backtick is itself.
var psBacktick = map[rune]rune{'0': 0, 'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v'}

// psChar is the one subexpression Quote writes: $([char]0x1b).
var psChar = regexp.MustCompile(`^\$\(\[char\]0x([0-9a-f]+)\)`)

// TestPowerShellReadsBackHostileWords: each hostile word (those a Windows
// name can hold), quoted, is text with no character a terminal acts on,
// and PowerShell's reading of it gives the word back.
func TestPowerShellReadsBackHostileWords(t *testing.T) {
	for _, w := range hostileWords {
		if !utf8.ValidString(w) && w != "\xed\xa0\x80" {
			continue // a byte no Windows name holds: its text is in TestPowerShellQuote
		}
		line := PowerShell.Join([]string{"prog", w})
		if needsEscapes(line) {
			t.Errorf("%q is written as %q, which holds characters a terminal acts on", w, line)
		}
		if got := psParse(t, line); len(got) != 2 || got[1] != w {
			t.Errorf("PowerShell reads %q back from %s, want [prog %q]", got, line, w)
		}
	}
}

// FuzzPowerShellQuote: whatever the argument, PowerShell reads back
// exactly it, as one word.
func FuzzPowerShellQuote(f *testing.F) {
	for _, s := range []string{"", "a b", "$x", "`", `"`, "“", "C:\\R&D", "--%", "0x10", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		got := psParse(t, PowerShell.Join([]string{"prog", s}))
		if len(got) != 2 || got[1] != s {
			t.Fatalf("PowerShell reads %q back from %s, want [prog %q]", got, PowerShell.Join([]string{"prog", s}), s)
		}
	})
}
