package health

// The rules that judge a CUDA build of torch against the driver and the
// GPUs, and the words they name GPUs and drivers with.

import (
	"fmt"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// cudaTorch checks a CUDA build against the driver and every GPU, by
// kb.CheckBuild: the same verdict the repair plan chooses by.
func (c *envCheck) cudaTorch(t *pyenv.Package) {
	if !c.g.HasDriver() {
		return
	}
	m := kb.MachineOf(c.g)
	bin, binEv := c.torchBinary(t)
	b := kb.CheckBuildFrom(t.Version, t.CUDA, m, bin)
	if b.Inferred != "" {
		// A release newer than the tables, judged all the same: every
		// finding below rests on inferred facts and says so.
		first := len(c.out)
		defer func() { c.markInferred(first, b.Inferred) }()
		code, what := finding.CodeTorchUnknownRelease, "the release"
		if b.ReleaseKnown {
			// A variant a refresh learned, whose arch list is not known.
			code, what = finding.CodeTorchBuildUnchecked, "the build's GPU architectures"
		}
		c.add(code, finding.SeverityInfo,
			fmt.Sprintf("torch %s is not fully in GPU Canary's tables (their facts are as of %s): %s. An overlay (docs/guide.md, \"Knowledge\") can teach it %s.",
				t.Version, kb.AsOf(), b.Inferred, what),
			"", t.Evidence)
	}
	switch {
	case b.Driver.Support == kb.SupportNo:
		supports := m.DriverCUDALabel()
		if m.DriverCUDAFrom == "" {
			supports += " at most" // as the driver said; a derived version is only a lower bound
		}
		c.add(finding.CodeDriverTooOld, finding.SeverityError,
			fmt.Sprintf("torch %s is built for CUDA %s, but the NVIDIA driver %s supports %s: torch will fail with \"The NVIDIA driver on your system is too old\". %s",
				t.Version, t.CUDA, c.g.Driver, supports, b.Driver.Reason),
			c.fixFor(finding.CodeDriverTooOld, finding.SeverityError, t), t.Evidence)
	case b.Driver.Support == kb.SupportYes && b.Driver.MinorCompat && b.Driver.Unconfirmed:
		// The driver's version shows that it runs the build, not whether
		// in full: nothing to repair on a guess, so no fix.
		c.add(finding.CodeDriverTooOld, finding.SeverityWarning,
			fmt.Sprintf("torch %s is built for CUDA %s and the driver %s supports %s: it runs, at least through CUDA minor-version compatibility; whether the driver supports CUDA %s in full could not be confirmed. %s",
				t.Version, t.CUDA, c.g.Driver, m.DriverCUDALabel(), t.CUDA, b.Driver.Reason),
			"", t.Evidence)
	case b.Driver.Support == kb.SupportYes && b.Driver.MinorCompat:
		c.add(finding.CodeDriverTooOld, finding.SeverityWarning,
			fmt.Sprintf("torch %s is built for CUDA %s and the driver %s supports %s: it runs through CUDA minor-version compatibility, but kernels compiled just in time from PTX will fail. %s",
				t.Version, t.CUDA, c.g.Driver, m.DriverCUDALabel(), b.Driver.Reason),
			c.fixFor(finding.CodeDriverTooOld, finding.SeverityWarning, t), t.Evidence)
	}
	// What could not be checked is said, in one finding: the driver
	// (whose CUDA version neither it nor its version told), then the GPUs.
	driverNote, driverWhy := "", ""
	switch {
	case m.DriverCUDA == "":
		driverWhy = m.DriverCUDAUnknown
		driverNote = fmt.Sprintf(" Nor could it be checked against %s: %s, so whether the driver runs CUDA %s builds is not known.",
			driverName(c.g), driverWhy, t.CUDA)
	case b.Driver.Support == kb.SupportUnknown && b.Driver.Unconfirmed:
		// A CUDA version derived from the driver's version is a lower
		// bound: a build newer than it is not refused on it, only said
		// to be unconfirmed.
		driverWhy = b.Driver.Reason
		driverNote = fmt.Sprintf(" Nor could it be checked against %s: %s.", driverName(c.g), driverWhy)
	}
	if b.Unchecked != "" {
		code := finding.CodeTorchBuildUnchecked
		if !b.ReleaseKnown {
			code = finding.CodeTorchUnknownRelease
		}
		c.add(code, finding.SeverityWarning,
			fmt.Sprintf("torch %s could not be checked against this machine's GPUs (%s): %s. Whether it has kernels for them is not known until it runs.%s", t.Version, m.Describe(), b.Unchecked, driverNote),
			"", t.Evidence)
		return
	}
	switch unknown := m.Unknown(); {
	case len(unknown) > 0:
		// No table row and no driver answer gives these GPUs' compute
		// capability (an asleep GPU is not asked; its name is not in the
		// table): the build is judged against the others only, so say so
		// rather than let silence read as "fine on every GPU".
		c.add(finding.CodeTorchBuildUnchecked, finding.SeverityWarning,
			fmt.Sprintf("torch %s could not be checked against %s: the compute capability of %s is not known (the driver did not give it and the product name is not in GPU Canary's table). Whether torch has kernels for it is not known until it runs.%s",
				t.Version, gpuLabels(unknown), pronoun(len(unknown)), driverNote),
			"", t.Evidence)
	case driverNote != "":
		c.add(finding.CodeTorchBuildUnchecked, finding.SeverityWarning,
			fmt.Sprintf("torch %s could not be checked against %s: %s. Whether the driver runs CUDA %s builds is not known until torch runs.",
				t.Version, driverName(c.g), driverWhy, t.CUDA),
			"", t.Evidence)
	}
	if bad := b.Unsupported(); len(bad) > 0 {
		c.add(finding.CodeGPUArchUnsupported, finding.SeverityError,
			fmt.Sprintf("torch %s has no kernels for %s: torch will say \"no kernel image is available for execution on the device\" there. %s. GPUs judged: %s; %s.%s",
				t.Version, archNames(bad), archReasons(bad), m.Describe(), kb.GPUsCounted, c.upgradeNote(t)),
			c.fixFor(finding.CodeGPUArchUnsupported, finding.SeverityError, t), append(binEv, t.Evidence...))
		return
	}
	if ptx := b.PTXOnly(); len(ptx) > 0 {
		c.add(finding.CodeGPUArchUnsupported, finding.SeverityWarning,
			fmt.Sprintf("torch %s has no machine code for %s, only PTX the driver compiles on first use: the first start takes minutes, and the CUDA %s libraries it ships may have no code for it. %s. GPUs judged: %s; %s.%s",
				t.Version, archNames(ptx), t.CUDA, archReasons(ptx), m.Describe(), kb.GPUsCounted, c.upgradeNote(t)),
			c.fixFor(finding.CodeGPUArchUnsupported, finding.SeverityWarning, t), append(binEv, t.Evidence...))
	}
}

// markInferred marks the findings from index first on as resting on
// inferred facts: in JSON (Inferred) and in words.
func (c *envCheck) markInferred(first int, why string) {
	for i := first; i < len(c.out); i++ {
		c.out[i].Inferred = true
		if i != first {
			c.out[i].Message += " (Inferred: " + why + ".)"
		}
	}
}

// driverName names the driver for a message: "the NVIDIA driver
// 550.54.15", or "the NVIDIA driver" when it did not give its version.
func driverName(g gpu.State) string {
	if g.Driver == "" {
		return "the NVIDIA driver"
	}
	return "the NVIDIA driver " + g.Driver
}

// gpuLabels names GPUs as kb labels them: "NVIDIA GeForce MX150
// (compute capability not known, asleep)".
func gpuLabels(gs []kb.GPU) string {
	labels := make([]string, len(gs))
	for i, g := range gs {
		labels[i] = g.Label()
	}
	if len(labels) == 1 {
		return labels[0]
	}
	return strings.Join(labels[:len(labels)-1], ", ") + " and " + labels[len(labels)-1]
}

func pronoun(n int) string {
	if n == 1 {
		return "that GPU"
	}
	return "those GPUs"
}

// archNames names GPUs with their architecture: "the NVIDIA GeForce RTX
// 5090 (Blackwell, sm_120)".
func archNames(vs []kb.GPUVerdict) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		arch, _ := kb.Architecture(v.GPU.CC)
		if arch == "" {
			arch = "architecture not known"
		}
		extra := ""
		if v.GPU.Asleep {
			extra = ", asleep"
		}
		names[i] = fmt.Sprintf("the %s (%s, sm_%s%s)", v.GPU.Name, arch, strings.ReplaceAll(v.GPU.CC, ".", ""), extra)
	}
	return strings.Join(names, " and ")
}

// archReasons joins the kb reasons of several GPUs.
func archReasons(vs []kb.GPUVerdict) string {
	rs := make([]string, len(vs))
	for i, v := range vs {
		rs[i] = v.Reason
	}
	s := strings.Join(rs, "; ")
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}
