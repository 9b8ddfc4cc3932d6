package kb

import (
	"fmt"
	"strings"
)

// LastReleaseFor finds the newest torch release older than torchVersion
// with a variant that is Clean on machine m, at its newest patch and with
// its companions: what to propose when neither the installed release nor
// any newer one has code for a GPU here. uv's --torch-backend=auto
// chooses by the driver alone (astral-sh/uv#14742) and so gives a Pascal
// card torch 2.15, which has no kernel for it; this chooses by compute
// capability too: a GTX 1080 Ti on 2.15 gets 2.14 + cu126, the last
// release with code for sm_61. The Reason names the GPUs the newer
// releases lack and what else changes with the downgrade.
func LastReleaseFor(torchVersion string, m Machine) (Choice, bool) {
	installed, ok := parseTorch(torchVersion)
	if !ok {
		return Choice{Reason: fmt.Sprintf("torch version %q cannot be read", torchVersion)}, false
	}
	rows := facts().releases
	// The releases from the installed one on (for one newer than the
	// table, the last, which judges it): a GPU none of them has code for
	// is what a downgrade is for. When they cover every GPU the driver is
	// what keeps them from running, and an older release is no answer.
	from := len(rows) - 1
	for i := range rows {
		if rows[i].Minor == installed.minor || compareTorch(rows[i].Patches[len(rows[i].Patches)-1], installed.patch) >= 0 {
			from = i
			break
		}
	}
	lost := lostFrom(from, m)
	if len(lost) == 0 {
		return Choice{Reason: fmt.Sprintf("torch %s or a newer release has code for every GPU here, so no older release is proposed", installed.patch)}, false
	}
	for i := len(rows) - 1; i >= 0; i-- {
		r := &rows[i]
		if r.JudgeOnly || r.Minor == installed.minor || compareTorch(r.Patches[len(r.Patches)-1], installed.patch) >= 0 {
			continue
		}
		patch := r.Patches[len(r.Patches)-1]
		c, ok := chooseIn(r, patch, m)
		if !ok {
			continue
		}
		what := "code for " + joinAnd(lost)
		c.Reason = fmt.Sprintf("no build of torch %s, nor of any newer release in GPU Canary's table, runs on %s with %s; torch %s + %s is the last release with %s, so the fix goes back to it. What else changes: torch %s → %s (code that needs %s will not run), %s with it, and CUDA %s; %s",
			installed.patch, describeGPUs(m), describeDriver(m), patch, c.Tag, what,
			installed.patch, patch, installed.minor, companionWords(c), c.CUDA, c.Reason)
		return c, true
	}
	return Choice{Reason: fmt.Sprintf("no older torch release in GPU Canary's table has a build that runs on %s with %s", describeGPUs(m), describeDriver(m))}, false
}

// lostFrom names the architectures of the GPUs here that no variant of
// rows[i] or a later release has machine code for: what the downgrade is
// for ("sm_61").
func lostFrom(i int, m Machine) []string {
	rows := facts().releases
	var lost []string
	for _, g := range m.known() {
		covered := false
		for j := i; j < len(rows) && !covered; j++ {
			for _, tag := range rows[j].Tags {
				list, note, ok := archFor(m.wheelPlatform(), rows[j].Minor, tag)
				if !ok {
					continue
				}
				if v := buildRuns(list, note, rows[j].Minor, tag, g.CC); v.Support == SupportYes && !v.ViaPTX {
					covered = true
					break
				}
			}
		}
		if name := smName(g.CC); !covered && !strings.Contains(strings.Join(lost, " "), name) {
			lost = append(lost, name)
		}
	}
	return lost
}

// companionWords names the companions that change with a choice:
// "torchvision 0.29.0 (torchaudio has no release for it)".
func companionWords(c Choice) string {
	vision, audio := "torchvision "+c.Vision, "torchaudio "+c.Audio
	if c.Vision == "" {
		vision = "torchvision (its version not known)"
	}
	if c.Audio == "" {
		return vision + " (torchaudio has no release for it: it is left as it is)"
	}
	return vision + " and " + audio
}
