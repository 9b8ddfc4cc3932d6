package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/uvproject"
)

// edit is one file the guard writes: its new content, from the old one.
type edit struct {
	path string
	// root is the folder path is opened from, never through a link: the
	// environment, or its uv project's folder (files.go).
	root string
	// make returns the file's content under the guard from its content
	// now (nil when it does not exist).
	make func(old []byte) ([]byte, error)
	// says is what the edit does, for Result.Lines.
	says string
}

// guarded are the packages a guard holds, where installed: torch and the
// companions built against it, which a new torch drags along.
var guarded = []string{pyenv.Torch, pyenv.TorchVision, pyenv.TorchAudio}

// plan chooses, by the environment's manager, the files that keep its
// torch, or refuses with the reason.
func (k Keeper) plan(e *pyenv.Env) ([]edit, []string, error) {
	refuse := func(format string, a ...any) ([]edit, []string, error) {
		return nil, nil, &Refused{Env: e.Path, Reason: fmt.Sprintf(format, a...)}
	}
	t := e.Torch()
	switch {
	case t == nil:
		return refuse("it has no torch to keep")
	case t.Build != pyenv.BuildCUDA:
		return refuse("its torch %s is a %s build; the guard keeps a CUDA build, so repair it first (gpucanary fix)", t.Version, t.BuildText())
	case t.Site != "" && e.SitePackages != "" && filepath.Clean(t.Site) != filepath.Clean(e.SitePackages):
		return refuse("the torch import loads is in %s, not in the environment's own site-packages", t.Site)
	}
	for _, n := range guarded {
		if p := e.Packages[n]; p != nil {
			for _, v := range []string{p.Version, p.DistVersion} {
				if v != "" && !plainWord(v) {
					return refuse("the version %s of %s holds characters no version has, and it would be written into the installer's files", strconv.Quote(v), n)
				}
			}
		}
	}
	pins := pipPins(e)
	switch {
	case e.Kind == pyenv.KindConda:
		ed := k.pipEdits(e, pins)
		if c := condaEdit(e); c != nil {
			ed = append(ed, *c)
		}
		return ed, pins, nil
	case e.Installer == pyenv.InstallerUV:
		proj, ok := uvproject.FindProject(e.Path)
		if !ok {
			return refuse("it is a uv environment outside a uv project: `uv pip install` reads no pip config, and uv takes constraints only per command (--constraint, UV_CONSTRAINT) or from a project's pyproject.toml")
		}
		return k.uvEdits(e, proj.Pyproject)
	case e.Kind == pyenv.KindPrefix && !hasInterpreter(e):
		return refuse("pip reads its config from the prefix of the interpreter it runs under, and %s holds no interpreter (a user base or a bare prefix)", e.Path)
	}
	return k.pipEdits(e, pins), pins, nil
}

// plainWord is true for a version, a package name or a build string as
// the installers write them: letters, digits and . _ + ! - only. What
// the guard writes into a constraints file, pinned or pyproject.toml
// comes from the environment's own files, which its owner controls; a
// line break or a quote there would be a line of their choosing in a
// file root writes.
func plainWord(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._+!-", r))
	})
}

// pipPins are the constraint lines for pip: the installed version
// exactly. A version with a local tag ("2.5.1+cu121") is pinned with ==,
// which then matches that tag only; one without (PyPI's CUDA torch
// "2.5.1") with ===, since ==2.5.1 would also admit "2.5.1+cpu" (PEP 440
// ignores a local tag the specifier does not name).
func pipPins(e *pyenv.Env) []string {
	var pins []string
	for _, n := range guarded {
		p := e.Packages[n]
		if p == nil {
			continue
		}
		v := p.DistVersion
		if v == "" {
			v = p.Version
		}
		op := "==="
		if strings.Contains(v, "+") {
			op = "=="
		}
		pins = append(pins, n+op+v)
	}
	return pins
}

// hasInterpreter is true when an interpreter lies at a prefix's top
// (python.exe, an embedded Python's layout) or in its bin/.
func hasInterpreter(e *pyenv.Env) bool {
	var names []string
	if e.Layout == pyenv.LayoutWindows {
		names = []string{"python.exe", filepath.Join("Scripts", "python.exe")}
	} else {
		names = []string{filepath.Join("bin", "python3"), filepath.Join("bin", "python")}
	}
	for _, n := range names {
		if fi, err := os.Stat(filepath.Join(e.Path, n)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// marker starts the comment of every file the guard writes: what
// `unguard --force` finds its part of a file by.
const marker = "Written by GPU Canary (gpucanary guard)"

// header is the comment every file the guard writes starts its part
// with. The environment's path is escaped (a newline in it would end the
// comment and start a setting).
func header(env string) []string {
	return []string{
		marker + ": keeps the CUDA build of torch installed in",
		escape(env) + " so that an install asking for another build fails rather than replaces it.",
		"To install another torch on purpose, first run: gpucanary unguard " + quoteArg(escape(env)),
	}
}

// quoteArg quotes a path for the comment's command line when it needs it.
// A Windows path (backslashes, no slash) is quoted for cmd and PowerShell:
// in double quotes, and only when it holds a space.
func quoteArg(s string) string {
	if strings.Contains(s, `\`) && !strings.Contains(s, "/") {
		if strings.ContainsAny(s, " \t") {
			return `"` + s + `"`
		}
		return s
	}
	if strings.ContainsAny(s, " \t'\"$`\\&;|<>()*?[]{}!#~") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}

// comment prefixes each line with "# ".
func comment(lines []string, nl string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("# " + l + nl)
	}
	return b.String()
}
