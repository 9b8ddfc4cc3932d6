// Command carve makes the fixtures in monitor/fatbin/testdata from real
// CUDA libraries: it reads a library with the fatbin reader through a
// recorder and keeps only the bytes the reader read (headers; no
// payload). Run from the module root:
//
//	npm pack @node-llama-cpp/linux-x64-cuda@3.22.1 @node-llama-cpp/win-x64-cuda@3.21.1
//	(untar both)
//	go run ./monitor/fatbin/testdata/carve package/bins/linux-x64-cuda/libggml-cuda.so monitor/fatbin/testdata/libggml-cuda.so.carve.gz
//	go run ./monitor/fatbin/testdata/carve package/bins/win-x64-cuda/ggml-cuda.dll monitor/fatbin/testdata/ggml-cuda.dll.carve.gz
package main

import (
	"fmt"
	"os"

	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/fatbin/fatbintest"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: carve LIBRARY OUT.carve.gz")
		os.Exit(2)
	}
	if err := carve(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "carve:", err)
		os.Exit(1)
	}
}

func carve(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	rec := &fatbintest.Recorder{R: f}
	k, err := fatbin.Read(rec, fi.Size())
	if err != nil {
		return fmt.Errorf("reading %s: %w", in, err)
	}
	c, err := rec.Carve(fi.Size())
	if err != nil {
		return err
	}
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := c.Write(o); err != nil {
		o.Close()
		return err
	}
	fmt.Printf("%s: %s, %d containers; kept %d ranges\n", in, k, k.Containers, len(c.Ranges))
	return o.Close()
}
