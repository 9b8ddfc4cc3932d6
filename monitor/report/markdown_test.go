package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMarkdownIsEscaped: an environment path holding HTML reaches the
// heading escaped, and a fix command or a process command holding
// backticks stays in one code span (issue 32, L12).
func TestMarkdownIsEscaped(t *testing.T) {
	b := bundle()
	hostile := "/home/u/<img src=x onerror=alert(1)>*bold*_x_/.venv"
	b.Check.Envs[0].Env.Path = hostile
	b.Check.Envs[0].Findings[0].Message = "torch in " + hostile + " is a [CPU](http://evil) build"
	b.Check.Envs[0].Findings[0].Fix = "uv pip install --python '" + hostile + "`rm -rf ~`' torch"
	b.Processes[0].Cmdline = []string{"python", "-c", "print(``)", "a|b"}
	dir := filepath.Join(t.TempDir(), "report")
	if err := Write(dir, b); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "env_info.md"))
	if err != nil {
		t.Fatal(err)
	}
	info := string(raw)
	for _, want := range []string{
		"### /home/u/\\<img src=x onerror=alert(1)>\\*bold\\*\\_x\\_/.venv\n",
		"torch in /home/u/\\<img src=x onerror=alert(1)>\\*bold\\*\\_x\\_/.venv is a \\[CPU](http://evil) build",
		"  - fix: ``uv pip install --python '" + hostile + "`rm -rf ~`' torch``\n",
		"| ```python -c print(``) a\\|b``` |\n",
	} {
		if !strings.Contains(info, want) {
			t.Errorf("env_info.md lacks %q:\n%s", want, info)
		}
	}
	for _, line := range strings.Split(info, "\n") {
		if strings.HasPrefix(line, "  - fix: `") {
			continue // a code span shows HTML as written
		}
		if strings.Contains(strings.ReplaceAll(line, "\\<", ""), "<img") {
			t.Errorf("raw HTML in env_info.md: %q", line)
		}
	}
}

func TestMdText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/home/u/llm/.venv", "/home/u/llm/.venv"},
		{"TORCH_CPU_BUILD in site_packages", "TORCH_CPU_BUILD in site_packages"},
		{"_private_", `\_private\_`},
		{`C:\Users\ada\.venv`, `C:\Users\ada\\.venv`},
		{`evil\x1b]0;owned\x07`, `evil\x1b]0;owned\x07`},
		{"a & b | c ~~d~~ #e `f`", "a \\& b \\| c \\~\\~d\\~\\~ \\#e \\`f\\`"},
	} {
		if got := mdText(c.in); got != c.want {
			t.Errorf("mdText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCodeSpan(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"pip install torch", "`pip install torch`"},
		{"echo `id`", "`` echo `id` ``"},
		{"a``b", "```a``b```"},
		{"`", "`` ` ``"},
	} {
		if got := codeSpan(c.in); got != c.want {
			t.Errorf("codeSpan(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
