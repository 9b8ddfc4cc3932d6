package kb

import (
	"fmt"
	"strings"
)

// Architecture names the GPU architecture of a compute capability ("8.6"
// -> "Ampere"), for messages a person reads.
func Architecture(cc string) (string, bool) {
	for _, g := range facts().gpus {
		if c, ok := compareCUDA(g.CC, cc); ok && c == 0 {
			return g.Arch, true
		}
	}
	return "", false
}

// ArchList is the code an official wheel carries: machine code (SASS) for
// these compute capabilities, and PTX that newer GPUs compile just in time.
type ArchList struct {
	SASS       []string `json:"sass"`
	PTX        []string `json:"ptx,omitempty"`
	Source     string   `json:"source"`
	Unverified bool     `json:"unverified,omitempty"`
}

// ArchVerdict says whether a build has code for a GPU.
type ArchVerdict struct {
	Support Support
	// ViaPTX is true when only PTX covers the GPU: it runs after a
	// just-in-time compile on first use, if the driver can compile it.
	ViaPTX bool
	Reason string
}

// archFor finds the arch list of a release's variant on a wheel platform;
// a platform without a row of its own is judged by the Linux x86_64 row,
// and note says so.
func archFor(platform, minor, tag string) (list *archRow, note string, ok bool) {
	if a, ok := facts().archOf[archKey(platform, minor, tag)]; ok {
		return a, "", true
	}
	if a, ok := facts().archOf[archKey(PlatformLinuxX86, minor, tag)]; ok && platform != PlatformLinuxX86 {
		return a, fmt.Sprintf("the arch list of the %s wheel, since the table has none for %s: not verified", PlatformLinuxX86, platform), true
	}
	return nil, "", false
}

// buildRuns judges compute capability cc against the arch list of a
// build; torchVersion and tag are only named in the Reason, with note
// (a hedge on where the list comes from) when it is not "".
func buildRuns(list *archRow, note, torchVersion, tag, cc string) ArchVerdict {
	gm, gn, ok := cudaParts(cc)
	if !ok {
		return ArchVerdict{Reason: fmt.Sprintf("compute capability %q cannot be read", cc)}
	}
	hedge := ""
	switch {
	case note != "":
		hedge = " (" + note + ")"
	case list.Unverified:
		hedge = " (the arch list of this build is not verified)"
	}
	// The newest SASS the GPU can run is the one torch loads.
	best := ""
	for _, s := range list.SASS {
		if sm, sn, ok := cudaParts(s); ok && sm == gm && sn <= gn {
			best = s
		}
	}
	if best != "" {
		return ArchVerdict{Support: SupportYes,
			Reason: fmt.Sprintf("torch %s %s has %s code, which runs on %s%s", torchVersion, tag, smName(best), smName(cc), hedge)}
	}
	for _, p := range list.PTX {
		if c, ok := compareCUDA(p, cc); ok && c <= 0 {
			return ArchVerdict{Support: SupportYes, ViaPTX: true,
				Reason: fmt.Sprintf("torch %s %s has no %s code but has compute_%s PTX, which the driver compiles just in time on first use%s",
					torchVersion, tag, smName(cc), strings.TrimPrefix(smName(p), "sm_"), hedge)}
		}
	}
	sass := make([]string, len(list.SASS))
	for i, s := range list.SASS {
		sass[i] = smName(s)
	}
	return ArchVerdict{Support: SupportNo,
		Reason: fmt.Sprintf("torch %s %s has code for %s only, none of which runs on %s%s",
			torchVersion, tag, strings.Join(sass, ", "), smName(cc), hedge)}
}
