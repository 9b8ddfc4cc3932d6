package guard

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/gpucanary/gpucanary/monitor/human"
)

// The guard edits files in an environment that another user may own and
// control, and it is often run as root (`sudo gpucanary guard`). So it
// edits only the environment's own guard files, each under a folder the
// user named (the environment, or its uv project's folder), and it never
// goes through a link: a link (or a folder in between that is a link) is
// how the environment's owner would make root write a file elsewhere.
// The per-platform halves (files_unix.go, files_windows.go) open each
// folder from that root down without following links, open the file
// itself the same way, and replace a file by renaming a new one over its
// name, so that what was at the name is never written to.

// UnsafeFileError is a guard file the guard will not read or write: a
// link, a folder on its way that is a link, something that is not a
// plain file, or a path outside the folder it belongs to.
type UnsafeFileError struct {
	Path string
	Why  string
}

func (e *UnsafeFileError) Error() string {
	return "refusing to edit " + e.Path + ": " + e.Why + "; GPU Canary edits only an environment's own files and never writes through a link"
}

// relInside is path relative to root, refused when it is not inside it.
func relInside(root, path string) (string, error) {
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(path))
	if err != nil || !filepath.IsLocal(rel) {
		return "", &UnsafeFileError{Path: path, Why: "it is not inside " + root}
	}
	return rel, nil
}

// readLimited reads at most limit bytes of the guard file at path from r;
// a longer one is an error (guard files are a few KB).
func readLimited(r io.Reader, path string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("reading %s: larger than %d bytes, which no guard file is", path, limit)
	}
	return b, nil
}

// linkWhy says what a link points to, for UnsafeFileError.
func linkWhy(what, target string) string {
	if target == "" {
		return what + " is a symbolic link"
	}
	return what + " is a symbolic link (to " + escape(target) + ")"
}

// escape makes s safe to write into a comment line of a config file, or
// to print: each control character (a newline, a carriage return, which
// Python's universal newlines also end a line at, an escape sequence) and
// each Unicode line separator is written as an escape (human.Visible). A
// path with a newline in it would otherwise end the comment and start a
// pip setting of its owner's choice.
func escape(s string) string { return human.Visible(s) }

// unsafeRune is true for a character escape changes.
func unsafeRune(r rune) bool { return human.Visible(string(r)) != string(r) }
