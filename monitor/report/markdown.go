package report

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gpucanary/gpucanary/monitor/human"
)

// What the Markdown files say comes from other users and other programs:
// environment paths, process commands, package metadata, host names. A
// folder named `<img src=x onerror=…>` or `*x*` must show as written in
// a Markdown viewer, not as HTML or emphasis, and a command holding
// backticks must not end the code span it is shown in. So every string
// written goes through writef, which makes it visible (human.Visible)
// and then escapes it for where it stands: text (mdText), or a code span
// (code, cellCode).

// code is a string writef writes as a code span.
type code string

// cellCode is a string writef writes as a code span in a table cell,
// where GFM splits cells at every |, even inside a code span, unless it
// is written \|.
type cellCode string

// mdText escapes s for Markdown text with a backslash before each
// character that could start markup: HTML and autolinks (<), entities
// (&), emphasis (*, _ and ~), code spans (`), links ([), table cells (|)
// and heading closers (#), and a backslash that would escape the
// character after it. A _ between two letters or digits cannot start
// emphasis, and is left alone (TORCH_CPU_BUILD, site_packages), as is
// a backslash before anything else (the \x1b that human.Visible writes,
// which CommonMark shows as written).
func mdText(s string) string {
	if !strings.ContainsAny(s, "\\`*_[<&|~#") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '`', '*', '[', '<', '&', '|', '~', '#':
			b.WriteByte('\\')
		case '\\':
			if i+1 < len(s) && isASCIIPunct(s[i+1]) {
				b.WriteByte('\\')
			}
		case '_':
			if !(alnumBefore(s, i) && alnumAfter(s, i+1)) {
				b.WriteByte('\\')
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isASCIIPunct(c byte) bool {
	return c < utf8.RuneSelf && unicode.IsPunct(rune(c)) || strings.IndexByte("$+<=>^`|~", c) >= 0
}

func alnumBefore(s string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func alnumAfter(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// codeSpan writes s as a code span that s cannot end: its fence is one
// backtick longer than the longest run of backticks in s, with a space
// inside each end when s starts or ends with a backtick (CommonMark
// strips one space from each end of a code span that has one).
func codeSpan(s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || s != "" && strings.Trim(s, " ") == "" {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdArg is one argument of writef as it is written: made visible, then
// escaped for where it stands.
func mdArg(a any) any {
	switch v := a.(type) {
	case code:
		return codeSpan(human.Visible(string(v)))
	case cellCode:
		return codeSpan(strings.ReplaceAll(human.Visible(string(v)), "|", `\|`))
	case string:
		return mdText(human.Visible(v))
	}
	return a
}
