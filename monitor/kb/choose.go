package kb

import (
	"fmt"
	"slices"
	"strings"
)

// Choice is a torch build to install, with the companions to install
// beside it and why it was chosen.
type Choice struct {
	Torch, Tag, CUDA, Vision, Audio string
	Reason                          string
}

// ChooseVariant picks the CUDA variant of a torch version to (re)install
// on machine m: the newest whose build is Clean there (CheckBuild: the
// driver supports its CUDA in full and every GPU has machine code in it),
// so that installing it clears what the rules found. Tags the table has
// not verified are not chosen, nor releases it only judges. ok is false,
// with a Reason naming what excluded each variant, when none is clean.
func ChooseVariant(torchVersion string, m Machine) (Choice, bool) {
	r, v, ok := releaseOf(torchVersion)
	if !ok {
		return Choice{Reason: fmt.Sprintf("torch %s is not in GPU Canary's release table", torchVersion)}, false
	}
	return chooseIn(r, v.patch, m)
}

// NextReleaseFor finds the oldest torch release newer than torchVersion
// with a variant that is Clean on machine m, at the newest patch of that
// release and with its companions: what to propose when no build of the
// installed release runs here (a Blackwell GPU with torch 2.5). It never
// proposes an older release, nor one the table only judges.
func NextReleaseFor(torchVersion string, m Machine) (Choice, bool) {
	installed, ok := parseTorch(torchVersion)
	if !ok {
		return Choice{Reason: fmt.Sprintf("torch version %q cannot be read", torchVersion)}, false
	}
	rows := facts().releases
	for i := range rows {
		r := &rows[i]
		if r.JudgeOnly || compareTorch(r.Patches[len(r.Patches)-1], installed.patch) <= 0 || r.Minor == installed.minor {
			continue
		}
		if c, ok := chooseIn(r, r.Patches[len(r.Patches)-1], m); ok {
			return c, true
		}
	}
	return Choice{Reason: fmt.Sprintf("no torch release after %s in GPU Canary's table has a build that runs on %s with %s",
		installed.patch, describeGPUs(m), describeDriver(m))}, false
}

// chooseIn walks the variants of one release newest CUDA first and takes
// the first clean one.
func chooseIn(r *releaseRow, patch string, m Machine) (Choice, bool) {
	if r.JudgeOnly {
		return Choice{Reason: fmt.Sprintf("GPU Canary does not install torch %s: pytorch.org does not serve all of its builds under a version a pin can name", r.Minor)}, false
	}
	var excluded []string
	for i := len(r.Tags) - 1; i >= 0; i-- {
		tag := r.Tags[i]
		cuda, _ := CUDAForTag(tag)
		if slices.Contains(r.TagsUnverified, tag) {
			excluded = append(excluded, fmt.Sprintf("that %s exists is not verified", tag))
			continue
		}
		if ps, ok := r.TagPlatforms[tag]; ok && !slices.Contains(ps, m.wheelPlatform()) {
			excluded = append(excluded, fmt.Sprintf("%s has no %s wheels", tag, m.wheelPlatform()))
			continue
		}
		c := CheckBuild(patch+"+"+tag, cuda, m)
		if !c.Clean() {
			excluded = append(excluded, c.Problems())
			continue
		}
		vision, audio, _ := r.companions(patch)
		why := fmt.Sprintf("%s is the newest CUDA variant of torch %s that runs on %s with %s (%s)",
			tag, patch, describeGPUs(m), describeDriver(m), GPUsCounted)
		if notes := choiceNotes(c, m); notes != "" {
			why += "; " + notes
		}
		if len(excluded) > 0 {
			why += " (" + strings.Join(excluded, "; ") + ")"
		}
		return Choice{Torch: patch, Tag: tag, CUDA: cuda, Vision: vision, Audio: audio, Reason: why}, true
	}
	return Choice{Reason: fmt.Sprintf("no CUDA variant of torch %s runs here: %s", patch, strings.Join(excluded, "; "))}, false
}

// choiceNotes says what a clean choice could not check: the driver, GPUs
// whose compute capability is not known, an unverified arch list.
func choiceNotes(c BuildCheck, m Machine) string {
	var notes []string
	if m.DriverCUDA == "" {
		notes = append(notes, "the driver's CUDA version is not known, so it was not checked")
		if m.DriverCUDAUnknown != "" {
			notes[len(notes)-1] += " (" + m.DriverCUDAUnknown + ")"
		}
	}
	for _, g := range m.Unknown() {
		notes = append(notes, fmt.Sprintf("%s was not checked: its compute capability is not known", g.Label()))
	}
	for _, g := range c.GPUs {
		if strings.Contains(g.Reason, "not verified") {
			notes = append(notes, "the arch list of this build is not verified")
			break
		}
	}
	return strings.Join(notes, "; ")
}

// describeGPUs names the machine's GPUs, or says there are none.
func describeGPUs(m Machine) string {
	if len(m.GPUs) == 0 {
		return "no GPU"
	}
	return m.Describe()
}

// describeDriver names the driver's CUDA version.
func describeDriver(m Machine) string {
	if m.DriverCUDA == "" {
		return "a driver whose CUDA version is not known"
	}
	return "a driver for " + m.DriverCUDALabel()
}

// Repair is the build a repair installs on a machine, and how it stands
// there: the planner installs it and the rules decide by it which
// findings the repair clears.
type Repair struct {
	Choice
	// Upgrade is true when it is a newer release than the installed one.
	Upgrade bool
	// Downgrade is true when it is an older release: no build of the
	// installed release or a newer one has code for some GPU here (a
	// Pascal card on torch 2.15, which has no CUDA 12 wheels).
	Downgrade bool
	// Check is the build judged on the machine: clean, or faulty only in
	// ways the rules warn about.
	Check BuildCheck
}

// ChooseRepair picks what a repair of torchVersion installs on machine m,
// best first: a clean variant of the installed release (ChooseVariant);
// else the oldest newer release with a clean variant (NextReleaseFor);
// else the newest variant of the installed release whose faults are all
// ones the rules only warn about (it runs through minor-version
// compatibility, or reaches a GPU only through PTX): worse than clean,
// better than a CPU build or none. ok is false, with a Reason, when
// nothing runs here.
func ChooseRepair(torchVersion string, m Machine) (Repair, bool) {
	judge := func(c Choice) BuildCheck { return CheckBuild(c.Torch+"+"+c.Tag, c.CUDA, m) }
	same, ok := ChooseVariant(torchVersion, m)
	if ok {
		return Repair{Choice: same, Check: judge(same)}, true
	}
	next, ok := NextReleaseFor(torchVersion, m)
	if ok {
		return Repair{Choice: next, Upgrade: true, Check: judge(next)}, true
	}
	if r, v, known := releaseOf(torchVersion); known && !r.JudgeOnly {
		// Faults the rules warn about, least first: reaching a GPU only
		// through PTX with a driver that supports the build in full (the
		// newest such variant), then minor-version compatibility (the
		// variant closest to the driver's CUDA).
		order := slices.Clone(r.Tags)
		slices.Reverse(order)
		for _, minorCompat := range []bool{false, true} {
			if minorCompat {
				slices.Reverse(order)
			}
			for _, tag := range order {
				if slices.Contains(r.TagsUnverified, tag) {
					continue
				}
				cuda, _ := CUDAForTag(tag)
				b := CheckBuild(v.patch+"+"+tag, cuda, m)
				if b.Unchecked != "" || b.Driver.Support == SupportNo || len(b.Unsupported()) > 0 || b.Driver.MinorCompat != minorCompat {
					continue
				}
				vision, audio, _ := r.companions(v.patch)
				why := fmt.Sprintf("no build of torch %s runs on %s with %s without a fault, and no newer release does; %s runs, with what the rules warn about: %s",
					v.patch, describeGPUs(m), describeDriver(m), tag, b.Problems())
				return Repair{Choice: Choice{Torch: v.patch, Tag: tag, CUDA: cuda, Vision: vision, Audio: audio, Reason: why}, Check: b}, true
			}
		}
	}
	if prev, ok := LastReleaseFor(torchVersion, m); ok {
		return Repair{Choice: prev, Downgrade: true, Check: judge(prev)}, true
	}
	return Repair{Choice: Choice{Reason: same.Reason + "; and " + next.Reason}}, false
}
