package pyenv

import "path/filepath"

// Interpreter is the environment's Python executable for its layout: the
// program a fix command runs pip with. It is where the file would be, read
// from the layout, not checked on disk.
func (e *Env) Interpreter() string {
	switch {
	case e.Layout == LayoutWindows && (e.Kind == "conda" || e.Kind == KindEmbedded):
		return filepath.Join(e.Path, "python.exe")
	case e.Layout == LayoutWindows:
		return filepath.Join(e.Path, "Scripts", "python.exe")
	default:
		return filepath.Join(e.Path, "bin", "python")
	}
}
