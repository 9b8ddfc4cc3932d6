//go:build windows

package fix

import "os/exec"

// GuardianMain: Windows needs no guardian (a job object ends the
// installer's tree with GPU Canary); it always returns false.
func GuardianMain() (handled bool, code int) { return false, 0 }

// guarded ignores the guardian on Windows.
func guarded(_ string, argv []string) *exec.Cmd { return exec.Command(argv[0], argv[1:]...) }
