package kb

import (
	"fmt"
	"strings"
)

// Choice is a torch build to install, with the companions to install
// beside it and why it was chosen.
type Choice struct {
	Torch, Tag, CUDA, Vision, Audio string
	Reason                          string
}

// ChooseVariant picks the CUDA variant of a torch version to (re)install
// on this machine: the newest whose CUDA the driver supports in full
// (variant CUDA <= driverCUDA) and whose arch list covers cc. An empty cc
// skips the arch check; an unknown arch list is allowed and the Reason says
// so; an empty driverCUDA skips the driver check and says so. ok is false,
// with a Reason naming what excluded each variant, when none fits.
func ChooseVariant(torchVersion, driverCUDA, cc string) (Choice, bool) {
	r, v, ok := releaseOf(torchVersion)
	if !ok {
		return Choice{Reason: fmt.Sprintf("torch %s is not in GPU Canary's release table", torchVersion)}, false
	}
	return chooseIn(r, v.patch, driverCUDA, cc, false)
}

// OldestReleaseFor finds the oldest torch release in the table with a
// variant that runs on this driver and GPU, at the newest patch of that
// release and with its companions: what to propose when the installed torch
// has no build for the machine (a Blackwell GPU with torch 2.5). A release
// whose arch list is unknown does not count when cc is given.
func OldestReleaseFor(driverCUDA, cc string) (Choice, bool) {
	rows := facts().releases
	for i := range rows {
		r := &rows[i]
		if c, ok := chooseIn(r, r.Patches[len(r.Patches)-1], driverCUDA, cc, true); ok {
			return c, true
		}
	}
	gpu, driver := "this GPU", "this driver"
	if cc != "" {
		gpu = smName(cc)
	}
	if driverCUDA != "" {
		driver = "a driver for CUDA " + driverCUDA
	}
	return Choice{Reason: fmt.Sprintf("no torch release in GPU Canary's table has a build for %s on %s", gpu, driver)}, false
}

// chooseIn walks the variants of one release newest CUDA first. With
// needKnownArch an unknown arch list excludes a variant instead of being
// allowed with a note.
func chooseIn(r *releaseRow, patch, driverCUDA, cc string, needKnownArch bool) (Choice, bool) {
	_, _, driverOK := cudaParts(driverCUDA)
	var excluded, notes []string
	if !driverOK {
		notes = append(notes, "the driver's CUDA version is not known, so it was not checked")
	}
	for i := len(r.Tags) - 1; i >= 0; i-- {
		tag := r.Tags[i]
		cuda, _ := CUDAForTag(tag)
		if driverOK {
			if c, _ := compareCUDA(cuda, driverCUDA); c > 0 {
				excluded = append(excluded, fmt.Sprintf("%s needs a driver with CUDA %s; this driver supports %s", tag, cuda, driverCUDA))
				continue
			}
		}
		if cc != "" {
			av := buildRuns(r.Minor, patch, tag, cc)
			switch {
			case av.Support == SupportNo:
				excluded = append(excluded, fmt.Sprintf("%s has no code for %s", tag, smName(cc)))
				continue
			case av.Support == SupportUnknown && needKnownArch:
				excluded = append(excluded, fmt.Sprintf("%s: its GPU architectures are not in the table", tag))
				continue
			case av.Support == SupportUnknown:
				notes = append(notes, fmt.Sprintf("the GPU architectures of %s are not in the table, so %s was not checked", tag, smName(cc)))
			case av.ViaPTX:
				notes = append(notes, fmt.Sprintf("%s runs on %s only through PTX compiled on first use", tag, smName(cc)))
			}
		}
		vision, audio, _ := r.companions(patch)
		why := fmt.Sprintf("%s is the newest CUDA variant of torch %s that this driver and GPU can run", tag, patch)
		if len(notes) > 0 {
			why += "; " + strings.Join(notes, "; ")
		}
		if len(excluded) > 0 {
			why += " (" + strings.Join(excluded, "; ") + ")"
		}
		return Choice{Torch: patch, Tag: tag, CUDA: cuda, Vision: vision, Audio: audio, Reason: why}, true
	}
	return Choice{Reason: fmt.Sprintf("no CUDA variant of torch %s runs here: %s", patch, strings.Join(excluded, "; "))}, false
}
