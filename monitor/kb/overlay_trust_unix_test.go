//go:build unix

package kb

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sm120For25 is an overlay that says torch 2.5's cu124 Linux build
// carries sm_120 (it does not): believed, it turns an RTX 5090 with
// torch 2.5.1+cu124 from GPU_ARCH_UNSUPPORTED into OK.
func sm120For25(t *testing.T) []byte {
	t.Helper()
	for _, a := range Snap().Arches {
		if a.platformOf() == PlatformLinuxX86 && a.Tag == "cu124" && slices.Contains(a.Minors, "2.5") {
			a.Minors, a.Source = []string{"2.5"}, "a planted overlay"
			a.SASS = append(slices.Clone(a.SASS), "12.0")
			b, err := json.Marshal(map[string]any{"arches": []archRow{a}})
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatal("no arch row for 2.5 cu124 on Linux")
	return nil
}

// rtx5090Judged is whether torch 2.5.1+cu124 runs on an RTX 5090 (sm_120)
// by the tables read over the overlays in paths, and the warnings.
func rtx5090Judged(t *testing.T, paths ...string) (runs bool, warnings []string) {
	t.Helper()
	useTables(t, withOverlays(embeddedTables(), paths))
	c := CheckBuild("2.5.1+cu124", "12.4", machine("12.8", "12.0"))
	return len(c.Unsupported()) == 0, OverlayWarnings()
}

// TestOverlayFromAnotherUserIsSkipped is issue 42's item 5: an overlay
// that another user (not root) owns, or that others can write, or that
// lies in a folder others can write or another user owns, is skipped
// with a warning naming it; the verdict stays the embedded one.
func TestOverlayFromAnotherUserIsSkipped(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("another user's files need root to make; these tests run as root in CI")
	}
	const nobody = 65534
	overlay := sm120For25(t)
	top := t.TempDir()
	// So that nobody can reach the folders below (t.TempDir makes both
	// the test's folder and this one 0700).
	must(t, os.Chmod(filepath.Dir(top), 0o755))
	must(t, os.Chmod(top, 0o755))

	// The control: the administrator's overlay, root's in a root folder
	// no one else can write, is believed, so the planted ones below are
	// skipped for whose they are, not for what they say.
	admin := filepath.Join(top, "etc-kb.d")
	must(t, os.Mkdir(admin, 0o755))
	good := filepath.Join(admin, "50-sm120.json")
	must(t, os.WriteFile(good, overlay, 0o644))
	if runs, w := rtx5090Judged(t, good); !runs || len(w) > 0 {
		t.Fatalf("root's overlay was not read (runs %v, warnings %q)", runs, w)
	}

	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) string
		why   string
	}{
		{"written by nobody into a 0777 kb.d", func(t *testing.T, dir string) string {
			kbd := filepath.Join(dir, "kb.d")
			must(t, os.Mkdir(kbd, 0o755))
			must(t, os.Chmod(kbd, 0o777))
			p := filepath.Join(kbd, "50-sm120.json")
			cmd := exec.Command("runuser", "-u", "nobody", "--", "sh", "-c", `cat > "$1"`, "sh", p)
			cmd.Stdin = strings.NewReader(string(overlay))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Skipf("runuser -u nobody cannot write the overlay (%v: %s)", err, out)
			}
			return p
		}, "other users can write it"},
		{"nobody's file in root's kb.d", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "50-sm120.json")
			must(t, os.WriteFile(p, overlay, 0o644))
			must(t, os.Lchown(p, nobody, nobody))
			return p
		}, "belongs to another user"},
		{"root's file that others can write", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "50-sm120.json")
			must(t, os.WriteFile(p, overlay, 0o644))
			must(t, os.Chmod(p, 0o666))
			return p
		}, "other users can write it"},
		{"root's file in nobody's kb.d", func(t *testing.T, dir string) string {
			kbd := filepath.Join(dir, "kb.d")
			must(t, os.Mkdir(kbd, 0o755))
			p := filepath.Join(kbd, "50-sm120.json")
			must(t, os.WriteFile(p, overlay, 0o644))
			must(t, os.Lchown(kbd, nobody, nobody))
			return p
		}, "belongs to another user"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(top, "case"+string(rune('a'+i)))
			must(t, os.Mkdir(dir, 0o755))
			p := c.setup(t, dir)
			runs, w := rtx5090Judged(t, p)
			if runs {
				t.Errorf("the planted overlay made torch 2.5.1+cu124 run on an RTX 5090")
			}
			if len(w) != 1 || !strings.Contains(w[0], p) || !strings.Contains(w[0], c.why) || !strings.Contains(w[0], "ignored") {
				t.Errorf("warnings %q; want one naming %s and saying %q", w, p, c.why)
			}
		})
	}
}

// TestOverlayWithBOM: an overlay saved with a UTF-8 byte order mark is
// read, as the settings and scenario files are.
func TestOverlayWithBOM(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "50-sm120.json")
	must(t, os.WriteFile(p, append([]byte("\ufeff"), sm120For25(t)...), 0o644))
	if runs, w := rtx5090Judged(t, p); !runs || len(w) > 0 {
		t.Fatalf("an overlay with a BOM: runs %v, warnings %q", runs, w)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
