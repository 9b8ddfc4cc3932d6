package uvproject

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

var update = flag.Bool("update", false, "rewrite golden files")

const base = "https://download.pytorch.org/whl"

func TestPinTextGolden(t *testing.T) {
	pkgs := []string{"torch", "torchvision", "torchaudio"}
	for _, name := range []string{"plain", "comments", "sources-existing", "index-existing", "crlf", "no-trailing-newline", "bom", "already-pinned"} {
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", name+".toml"))
			if err != nil {
				t.Fatal(err)
			}
			want := pkgs
			if name == "already-pinned" {
				want = []string{"torch", "torchvision"}
			}
			out, changed, err := PinText(src, base, "cu124", want)
			if err != nil {
				t.Fatal(err)
			}
			if changed != (name != "already-pinned") {
				t.Errorf("changed = %v", changed)
			}
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				os.WriteFile(golden, out, 0o644)
			}
			g, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -update creates it)", err)
			}
			if string(g) != string(out) {
				t.Errorf("%s differs:\n%s", golden, out)
			}
			keepsEveryByte(t, src, out)
			// Idempotent: a second pin changes nothing.
			again, changed, err := PinText(out, base, "cu124", want)
			if err != nil || changed || string(again) != string(out) {
				t.Errorf("second pin: changed=%v err=%v", changed, err)
			}
			// Line endings and BOM survive.
			if strings.Contains(string(src), "\r\n") && strings.Count(string(out), "\n") != strings.Count(string(out), "\r\n") {
				t.Error("mixed line endings after the edit")
			}
			if strings.HasPrefix(string(src), "\ufeff") != strings.HasPrefix(string(out), "\ufeff") {
				t.Error("BOM changed")
			}
			var doc pyprojectFile
			if err := toml.Unmarshal(stripBOM(out), &doc); err != nil {
				t.Fatalf("not TOML: %v", err)
			}
			for _, p := range want {
				if sourceIndex(doc.Tool.UV.Sources[p]) != "pytorch-cu124" {
					t.Errorf("%s not pinned", p)
				}
			}
		})
	}
}

// keepsEveryByte checks that the input's lines appear, byte for byte and
// in order, in the output: the edit only inserted lines.
func keepsEveryByte(t *testing.T, src, out []byte) {
	t.Helper()
	in := strings.SplitAfter(string(src), "\n")
	o := strings.SplitAfter(string(out), "\n")
	j := 0
	for i, l := range in {
		if l == "" {
			continue
		}
		last := i == len(in)-1 && !strings.HasSuffix(l, "\n")
		for j < len(o) && o[j] != l && !(last && strings.TrimRight(o[j], "\r\n") == l) {
			j++
		}
		if j == len(o) {
			t.Fatalf("input line %d %q is not in the output unchanged", i+1, l)
		}
		j++
	}
}

func TestPinTextRefuses(t *testing.T) {
	for name, want := range map[string]error{"conflict": ErrConflict, "inline-sources": ErrUnsupportedLayout} {
		t.Run(name, func(t *testing.T) {
			src, _ := os.ReadFile(filepath.Join("testdata", name+".toml"))
			_, _, err := PinText(src, base, "cu124", []string{"torch"})
			if !errors.Is(err, want) {
				t.Errorf("err = %v, want %v", err, want)
			}
		})
	}
	if _, _, err := PinText([]byte("[project\n"), base, "cu124", []string{"torch"}); err == nil {
		t.Error("malformed TOML accepted")
	}
}

func TestPinIndexFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pyproject.toml")
	src, _ := os.ReadFile(filepath.Join("testdata", "comments.toml"))
	if err := os.WriteFile(path, src, 0o640); err != nil {
		t.Fatal(err)
	}
	res, err := PinIndex(path, base, "cu121", []string{"torch"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || !strings.Contains(res.Message, "uv lock") {
		t.Errorf("result = %+v", res)
	}
	if b, _ := os.ReadFile(res.Backup); string(b) != string(src) {
		t.Error("the backup does not hold the original bytes")
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("permissions %v, want 0640", fi.Mode().Perm())
	}
	again, err := PinIndex(path, base, "cu121", []string{"torch"})
	if err != nil || again.Changed || again.Backup != "" {
		t.Errorf("second run: %+v %v", again, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("files: %d, want pyproject.toml and one backup", len(ents))
	}
}

func FuzzPinText(f *testing.F) {
	for _, n := range []string{"plain", "comments", "sources-existing", "crlf", "bom"} {
		b, _ := os.ReadFile(filepath.Join("testdata", n+".toml"))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		var in map[string]any
		if toml.Unmarshal(stripBOM(src), &in) != nil {
			return
		}
		out, _, err := PinText(src, base, "cu124", []string{"torch", "torchvision"})
		if err != nil {
			return
		}
		var doc map[string]any
		if err := toml.Unmarshal(stripBOM(out), &doc); err != nil {
			t.Fatalf("output is not TOML: %v\n%s", err, out)
		}
		again, changed, err := PinText(out, base, "cu124", []string{"torch", "torchvision"})
		if err != nil || changed || string(again) != string(out) {
			t.Fatalf("not idempotent: changed=%v err=%v", changed, err)
		}
	})
}
