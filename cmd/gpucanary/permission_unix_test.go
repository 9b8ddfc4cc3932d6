//go:build unix

package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// asUserEnv, set in a child's environment, says the test binary was run
// again as another user by runAsNobody, to test what root's bypass of
// mode bits would hide.
const asUserEnv = "GPUCANARY_TEST_AS_NOBODY"

// TestModeZeroEnvIsPermissionDenied: an environment folder whose mode
// denies this user (chmod 000) is reported as "permission denied", not
// as a folder that is not a Python environment (issue 32, L16).
func TestModeZeroEnvIsPermissionDenied(t *testing.T) {
	if os.Getuid() == 0 {
		runAsNobody(t, "TestModeZeroEnvIsPermissionDenied")
		return
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		mode os.FileMode
	}{{"000", 0}, {"r--, not searchable", 0o400}, {"-wx, not listable", 0o300}} {
		env := filepath.Join(dir, "locked-"+strconv.Itoa(int(tc.mode)))
		if err := writeSpec(env, incidentsSpec("good-cu121")); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(env, tc.mode); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(env, 0o755) }) // so that TempDir can remove it
		out, stderr, code := runCLI(t, "check", "--json", env)
		var r struct {
			Envs []struct {
				Findings []struct{ Code, Message string } `json:"findings"`
			} `json:"envs"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%s: %v; exit %d, stderr %s\n%s", tc.name, err, code, stderr, out)
		}
		if len(r.Envs) != 1 || len(r.Envs[0].Findings) != 1 || r.Envs[0].Findings[0].Code != "ENV_UNREADABLE" ||
			!strings.Contains(r.Envs[0].Findings[0].Message, "permission denied") || strings.Contains(r.Envs[0].Findings[0].Message, "not a Python environment") {
			t.Errorf("%s: exit %d\n%s", tc.name, code, out)
		}
	}
}

// runAsNobody runs the test named test again in a copy of this test
// binary as the user nobody, and fails with its output if it fails.
// Root reads every folder whatever its mode, so a test of what a mode
// denies runs as someone else; where no such user can be switched to,
// the test is skipped, saying why.
func runAsNobody(t *testing.T, test string) {
	t.Helper()
	if os.Getenv(asUserEnv) != "" {
		t.Fatal("still root after switching to nobody")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("SKIPPED: running as root and there is no user nobody to test a folder's mode as (%v)", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	// The test binary sits in go's private build folder: a copy in a
	// folder nobody may enter.
	dir, err := os.MkdirTemp("", "gpucanary-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "gpucanary.test")
	if err := copyFile(exe, bin); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), asUserEnv+"=1", "TMPDIR="+tmp, "HOME="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as nobody: %v\n%s", test, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("%s as nobody did not pass:\n%s", test, out)
	}
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// TestUnreadableCUDALibraryIsAnError: a library of torch this user may
// not read (chmod 000, as root bypasses it, run as nobody) is an error
// for the user who checks, not an OK: the dynamic loader could not read
// it either, and `import torch` fails with a permission error (issue 42,
// item 11).
func TestUnreadableCUDALibraryIsAnError(t *testing.T) {
	if os.Getuid() == 0 {
		runAsNobody(t, "TestUnreadableCUDALibraryIsAnError")
		return
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("NO_COLOR", "1")
	env := filepath.Join(t.TempDir(), "venv")
	if err := writeSpec(env, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	sim := simFile(t, simA100)
	if out, stderr, code := runCLI(t, "--gpu-sim", sim, "check", env); code != 0 {
		t.Fatalf("the readable environment: exit %d\n%s\n%s", code, out, stderr)
	}
	libs, err := filepath.Glob(filepath.Join(env, "lib", "python*", "site-packages", "torch", "lib", "libtorch_cuda.so"))
	if err != nil || len(libs) != 1 {
		t.Fatalf("libtorch_cuda.so: %v %v", libs, err)
	}
	if err := os.Chmod(libs[0], 0); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, "--gpu-sim", sim, "check", env)
	if code != exitFound || !strings.Contains(out, "libtorch_cuda.so of torch cannot be read by this user") {
		t.Fatalf("a libtorch_cuda.so this user may not read: exit %d\n%s\n%s", code, out, stderr)
	}
}
