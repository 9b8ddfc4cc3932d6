package wheeltest

import (
	"strconv"
	"strings"
)

// runtimeMarker is the marker real torch wheels put on their NVIDIA
// runtime requirements, as their METADATA writes it.
const runtimeMarker = `; platform_system == "Linux" and platform_machine == "x86_64"`

// runtimeOf is the NVIDIA runtime a CUDA torch wheel of this release
// requires, as stub wheels that each hold their library under
// nvidia/<lib>/lib/: a few of the real dozen (pytorch's
// .github/scripts/generate_binary_build_matrix.py,
// PYTORCH_EXTRA_INSTALL_REQUIREMENTS), named as the real ones are (-cu11
// and -cu12 suffixes; CUDA 13's mostly unsuffixed), with versions shaped
// like theirs. download.pytorch.org's CUDA wheels require them from 2.2
// (pytorch/pytorch#114281); earlier ones bundle the libraries.
func runtimeOf(version, cuda string) []Spec {
	major, rest, _ := strings.Cut(version, ".")
	minor, _, _ := strings.Cut(rest, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	cudaMajor, _, _ := strings.Cut(cuda, ".")
	cm, err3 := strconv.Atoi(cudaMajor)
	if err1 != nil || err2 != nil || err3 != nil || ma < 2 || ma == 2 && mi < 2 {
		return nil
	}
	suffix := "-cu" + cudaMajor
	plain := suffix
	if cm >= 13 {
		plain = "" // nvidia-cuda-runtime==13.0.48, nvidia-cublas==13.…
	}
	stub := func(name, version, lib string) Spec {
		libMajor, _, _ := strings.Cut(version, ".")
		return Spec{Name: name, Version: version, Libs: []string{lib + ".so." + libMajor}}
	}
	return []Spec{
		stub("nvidia-cuda-runtime"+plain, cuda+".77", "libcudart"),
		stub("nvidia-cublas"+plain, cuda+".4.1", "libcublas"),
		stub("nvidia-cudnn"+suffix, "9.1.0.70", "libcudnn"),
		stub("nvidia-nccl"+suffix, "2.21.5", "libnccl"),
	}
}

// stubDir is a runtime wheel's folder under nvidia/: cuda-runtime-cu12 ->
// cuda_runtime.
func stubDir(short string) string {
	if i := strings.LastIndex(short, "-cu"); i > 0 {
		short = short[:i]
	}
	return strings.ReplaceAll(short, "-", "_")
}
