package pyenv

import (
	"path/filepath"
	"testing"
)

func TestInterpreter(t *testing.T) {
	root := filepath.Join("/", "work", "env")
	for _, tc := range []struct {
		name string
		env  Env
		want string
	}{
		{"POSIX venv", Env{Path: root, Kind: "venv", Layout: LayoutPOSIX}, filepath.Join(root, "bin", "python")},
		{"POSIX conda", Env{Path: root, Kind: "conda", Layout: LayoutPOSIX}, filepath.Join(root, "bin", "python")},
		{"Windows venv", Env{Path: root, Kind: "venv", Layout: LayoutWindows}, filepath.Join(root, "Scripts", "python.exe")},
		{"Windows conda", Env{Path: root, Kind: "conda", Layout: LayoutWindows}, filepath.Join(root, "python.exe")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.env.Interpreter(); got != tc.want {
				t.Errorf("Interpreter() = %q, want %q", got, tc.want)
			}
		})
	}
}
