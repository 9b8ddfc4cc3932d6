package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpucanary/gpucanary/monitor/answers"
	"github.com/gpucanary/gpucanary/monitor/fstrace"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/guard"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
)

// answerStore is where `check --json` keeps each environment's finished
// answer (monitor/answers), in the user's cache folder beside the kernel
// cache and off with it (GPUCANARY_KERNEL_CACHE=off), under the inputs
// that every answer depends on besides its read (answerInputs). nil when
// there is no cache folder.
func (g *globals) answerStore(gs gpu.State) *answers.Store {
	dir, ok := cacheDir()
	if !ok {
		return nil
	}
	inputs, err := g.answerInputs(gs)
	if err != nil {
		g.log.Debug("no answers kept", "err", err)
		return nil
	}
	return answers.Open(filepath.Join(dir, "answers"), inputs, g.getenv)
}

// answerInputs is what a report depends on besides the disk and the
// variables its read asked for (which the read's trace records, the
// home folder's among them): this program (its file's stamp: any other
// build is another program), the facts in force (kb overlays), the
// settings, and the GPU, less what changes from one second to the next
// and no rule reads (memory in use, utilization, temperature, power,
// processes).
func (g *globals) answerInputs(gs gpu.State) ([]byte, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this program's file: %w", err)
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return nil, fmt.Errorf("stamping this program's file: %w", err)
	}
	gs.Devices = append([]gpu.Device(nil), gs.Devices...)
	for i := range gs.Devices {
		d := &gs.Devices[i]
		d.MemoryUsedBytes, d.Processes = 0, nil
		d.UtilizationGPU, d.UtilizationMemory, d.TemperatureC, d.PowerWatts = nil, nil, nil, nil
	}
	return json.Marshal(struct {
		Format  int
		Program fstrace.Stamp
		KB      string
		Config  any
		GPU     gpu.State
	}{2, fstrace.StampOf(fi), kb.Fingerprint(), g.cfg, gs})
}

// answerSubject names what an answer is about: the environment and how
// it was found (a report says both). "" for a report not worth keeping
// (one that reads nothing: a project to create, a kernel whose
// interpreter is gone) or not to be kept: a guarded environment's report
// says what the guard's record says, which its read does not look at.
// guards says whether any guard record may exist (guard.Keeper.Any,
// asked once a check).
func answerSubject(k guard.Keeper, guards bool, f envsearch.Found) string {
	if f.Create != "" || f.Missing != "" {
		return ""
	}
	if guards {
		if st := k.Read(f.Path); st.Guarded || len(st.Changed) > 0 {
			return ""
		}
	}
	// The read makes a relative path absolute from the working folder:
	// the answer is about the folder it names.
	path, err := filepath.Abs(f.Path)
	if err != nil {
		return ""
	}
	return path + "\x00" + f.Via + "\x00" + f.From
}
