//go:build linux

package fix

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestNoJournalNoRepair: when the journal's first record cannot be
// written (here a file size limit makes the write fail as a full disk
// does), the installer is never started, the error says that nothing
// was changed, and no empty journal is left in the state folder.
func TestNoJournalNoRepair(t *testing.T) {
	venv := t.TempDir()
	if err := pyenvtest.Write(venv, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip\n"}}); err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(t.TempDir(), "installer-ran")
	journals := filepath.Join(t.TempDir(), "repairs")
	job, err := json.Marshal(helperJob{
		Plan:    fixplan.Plan{Env: venv, Argv: []string{"/bin/sh", "-c", `: > "$0"`, ran}},
		Env:     venv,
		Journal: journals, FileLimit: 64,
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GPUCANARY_FIX_HELPER="+string(job))
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("the repair exited %d (%v); want 1: %s", code, err, out)
	}
	for _, want := range []string{"the repair journal cannot be written", "nothing was changed", "file too large"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the repair said %q; want %q in it", out, want)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the installer ran though the journal could not be written")
	}
	ents, err := os.ReadDir(journals)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left in the state folder: %s", e.Name())
	}
}
