//go:build unix

package owned

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// asUser makes the checks trust uid for the rest of the test, as if
// GPU Canary ran as that user.
func asUser(t *testing.T, uid int) {
	old := euid
	euid = func() int { return uid }
	t.Cleanup(func() { euid = old })
}

func TestCheck(t *testing.T) {
	me := os.Geteuid()
	other := me + 4242
	tests := []struct {
		name   string
		setup  func(t *testing.T, dir string) string // returns the path to check
		as     int
		policy Policy
		why    string // "" when trusted
	}{
		{"own private folder", func(t *testing.T, dir string) string { return mkdir(t, dir, "c", 0o700) }, me, Policy{}, ""},
		{"own folder readable by all", func(t *testing.T, dir string) string { return mkdir(t, dir, "c", 0o755) }, me, Policy{}, ""},
		{"group-writable", func(t *testing.T, dir string) string { return mkdir(t, dir, "c", 0o770) }, me, Policy{}, "other users can write it"},
		{"world-writable file", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "f")
			must(t, os.WriteFile(p, nil, 0o600))
			must(t, os.Chmod(p, 0o666))
			return p
		}, me, Policy{}, "other users can write it"},
		{"another user's folder", func(t *testing.T, dir string) string { return mkdir(t, dir, "c", 0o700) }, other, Policy{}, "belongs to another user"},
		{"the administrator's, allowed", func(t *testing.T, dir string) string { return mkdir(t, dir, "c", 0o755) }, other, Policy{Admin: true}, adminOrNot(me)},
		{"a link to an own folder", func(t *testing.T, dir string) string {
			target := mkdir(t, dir, "real", 0o700)
			link := filepath.Join(dir, "c")
			must(t, os.Symlink(target, link))
			return link
		}, me, Policy{}, "it is a link"},
		{"under a world-writable folder", func(t *testing.T, dir string) string {
			shared := mkdir(t, dir, "shared", 0o777)
			return mkdir(t, shared, "c", 0o700)
		}, me, Policy{}, "other users can write a folder above it"},
		{"under a sticky world-writable folder, as /tmp", func(t *testing.T, dir string) string {
			shared := mkdir(t, dir, "shared", 0o777|fs.ModeSticky)
			return mkdir(t, shared, "c", 0o700)
		}, me, Policy{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A folder of its own whose parents are root's or ours and
			// not writable by others, as t.TempDir's are under /tmp.
			dir := mkdir(t, t.TempDir(), "top", 0o755)
			path := tc.setup(t, dir)
			asUser(t, tc.as)
			err := Check(path, tc.policy)
			if tc.why == "" {
				if err != nil {
					t.Fatalf("Check(%s) = %v, want trusted", path, err)
				}
				return
			}
			var u *Untrusted
			if !errors.As(err, &u) {
				t.Fatalf("Check(%s) = %v, want *Untrusted (%s)", path, err, tc.why)
			}
			if !strings.Contains(u.Why, tc.why) || u.Owner == "" || u.Mode == "" {
				t.Fatalf("Check(%s) = %+v, want why %q with owner and mode", path, u, tc.why)
			}
		})
	}
}

// adminOrNot is what the administrator-allowed case expects: the test's
// folders are root's when the tests run as root, so they are trusted
// as the administrator's; another user's otherwise.
func adminOrNot(me int) string {
	if me == 0 {
		return ""
	}
	return "belongs to another user"
}

func TestCheckMissing(t *testing.T) {
	err := Check(filepath.Join(t.TempDir(), "none"), Policy{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Check(missing) = %v, want fs.ErrNotExist", err)
	}
}

func mkdir(t *testing.T, parent, name string, mode fs.FileMode) string {
	t.Helper()
	p := filepath.Join(parent, name)
	must(t, os.Mkdir(p, 0o700))
	must(t, os.Chmod(p, mode))
	return p
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCanMakeIn: a path may be made in a sticky folder all can write
// (/tmp), not in one without the sticky bit, nor in a folder another
// user owns.
func TestCanMakeIn(t *testing.T) {
	dir := t.TempDir()
	if err := CanMakeIn(mkdir(t, dir, "sticky", 0o777|fs.ModeSticky)); err != nil {
		t.Errorf("sticky folder: %v", err)
	}
	var u *Untrusted
	if err := CanMakeIn(mkdir(t, dir, "open", 0o777)); !errors.As(err, &u) || !strings.Contains(u.Why, "other users can write") {
		t.Errorf("a folder all can write: %v", err)
	}
	theirs := mkdir(t, dir, "theirs", 0o755)
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED: giving a folder to another user (uid 65534) needs root")
	}
	must(t, os.Chown(theirs, 65534, 65534))
	if err := CanMakeIn(theirs); !errors.As(err, &u) || !strings.Contains(u.Why, "belongs to another user") || u.Owner != "nobody" {
		t.Errorf("another user's folder: %v", err)
	}
}
