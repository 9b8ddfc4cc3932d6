// Package kb holds GPU Canary's facts about torch releases, their CUDA
// variants and companions, CUDA driver floors and GPU architectures, and
// answers the questions the health rules and the repair planner ask of
// them.
//
// The facts are embedded data (data/*.json) with the source of every row
// beside it; rows whose source is weak are marked unverified and the
// answers built on them say so. The torch tables go back to 1.0.
//
// CheckBuild is the one verdict on a CUDA build on a Machine (the driver
// and every GPU): the health rules report from it, and ChooseRepair, which
// both the repair planner and the rules call, chooses by it, so the rules
// know which of their findings the proposed build clears.
//
// When a machine disagrees with a table (a newer torch, a new GPU) the
// reading from disk or NVML wins: versions the tables do not know answer
// SupportUnknown, ok=false or BuildCheck.Unchecked, which the rules turn
// into a warning that says what could not be checked, never into a wrong
// error or silence.
package kb

// Support is a tri-state answer, because the tables may not know.
type Support int

// The answers to "does it work?".
const (
	SupportUnknown Support = iota
	SupportYes
	SupportNo
)
