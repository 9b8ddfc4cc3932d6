package pyenvtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/fatbin/fatbintest"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// SitePackages is where Write puts the packages of s at root.
func SitePackages(root string, s Spec) string {
	if s.Layout == pyenv.LayoutWindows {
		return filepath.Join(root, "Lib", "site-packages")
	}
	py := s.Python
	if py == "" {
		py = "3.11"
	}
	return filepath.Join(root, "lib", "python"+py, "site-packages")
}

// PutRealLibrary replaces the package file rel ("llama_cpp/lib/libggml-cuda.so",
// slash-separated, as RECORD lists it) of the environment Write made at
// root with a carved real CUDA library (fatbintest): a sparse file of the
// library's real size holding its real headers. The size RECORD gives is
// changed to match, as a wheel holding that library would say.
func PutRealLibrary(root string, s Spec, rel string, c fatbintest.Carved) (string, error) {
	site := SitePackages(root, s)
	path := filepath.Join(site, filepath.FromSlash(rel))
	if err := c.WriteSparse(path); err != nil {
		return "", fmt.Errorf("put %s: %w", path, err)
	}
	records, _ := filepath.Glob(filepath.Join(site, "*.dist-info", "RECORD"))
	for _, r := range records {
		data, err := os.ReadFile(r)
		if err != nil {
			return "", err
		}
		lines := strings.SplitAfter(string(data), "\n")
		changed := false
		for i, l := range lines {
			if strings.HasPrefix(l, rel+",") {
				j := strings.LastIndexByte(l, ',')
				lines[i] = l[:j+1] + strconv.FormatInt(c.Size, 10) + "\n"
				changed = true
			}
		}
		if changed {
			return path, os.WriteFile(r, []byte(strings.Join(lines, "")), 0o644)
		}
	}
	return path, nil
}
