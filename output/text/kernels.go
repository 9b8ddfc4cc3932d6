package text

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor"
)

// kernels prints each CUDA library's architectures, those of one package
// that carry the same ones on one line:
//
//	kernels           libggml-cuda.so (llama-cpp-python): sm_86 sm_89 sm_120 sm_121 · PTX 75 80 90
func (p Printer) kernels(e monitor.EnvReport) {
	type line struct{ pkg, says string }
	var order []line
	names := map[line][]string{}
	for _, l := range e.CUDALibs {
		says := l.Kernels
		if l.Error != "" {
			says = "could not be read: " + l.Error
		}
		k := line{l.Package, says}
		if _, ok := names[k]; !ok {
			order = append(order, k)
		}
		names[k] = append(names[k], filepath.Base(l.File))
	}
	for i, k := range order {
		label := ""
		if i == 0 {
			label = "kernels"
		}
		files := names[k]
		list := strings.Join(files, ", ")
		if len(files) > 3 {
			list = fmt.Sprintf("%s and %d more", strings.Join(files[:2], ", "), len(files)-2)
		}
		p.printf("  %-17s %s (%s): %s\n", label, list, k.pkg, k.says)
	}
}
