package uvproject

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const (
	base = "https://download.pytorch.org/whl"
	tag  = "cu128"
)

var allPackages = []string{"torch", "torchvision", "torchaudio"}

// TestPinTextGolden pins every testdata/*.toml and compares the result
// with testdata/*.golden (go test -update rewrites them; read the diff).
func TestPinTextGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.toml"))
	if err != nil || len(inputs) < 10 {
		t.Fatalf("testdata inputs: %v %v", inputs, err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".toml")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			out, changed, err := PinText(src, base, tag, allPackages)
			if err != nil {
				t.Fatal(err)
			}
			if changed != (name != "already-pinned") {
				t.Errorf("changed = %v", changed)
			}
			if !changed && string(out) != string(src) {
				t.Error("unchanged, yet the bytes differ")
			}
			golden := strings.TrimSuffix(in, ".toml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if string(want) != string(out) {
				t.Errorf("output differs from %s:\n%s", golden, out)
			}
			onlyInserted(t, src, out)
			again, changed, err := PinText(out, base, tag, allPackages)
			if err != nil || changed || string(again) != string(out) {
				t.Errorf("second pin: changed=%v err=%v", changed, err)
			}
			if strings.Contains(string(src), "\r\n") && strings.Count(string(out), "\n") != strings.Count(string(out), "\r\n") {
				t.Error("a CRLF file now has LF lines")
			}
			if strings.HasPrefix(string(src), "\ufeff") != strings.HasPrefix(string(out), "\ufeff") {
				t.Error("the BOM was added or lost")
			}
			var doc pyprojectFile
			if err := toml.Unmarshal(stripBOM(out), &doc); err != nil {
				t.Fatalf("the output is not TOML: %v", err)
			}
			for _, p := range allPackages {
				if idx := sourceIndex(doc.Tool.UV.Sources[p]); !sameURL(doc.indexURL(idx), base+"/"+tag) {
					t.Errorf("%s goes to index %q (%q)", p, idx, doc.indexURL(idx))
				}
			}
		})
	}
}

// insertedLine is every line PinText may add.
var insertedLine = regexp.MustCompile(`^(|\[\[tool\.uv\.index\]\]|\[tool\.uv\.sources\]|name = "pytorch-cu\d+"|url = "https://download\.pytorch\.org/whl/cu\d+"|explicit = true|torch(vision|audio)? = \[\{ index = "[^"]+", marker = "` + regexp.QuoteMeta(Marker) + `" \}\])\r?\n$`)

// onlyInserted removes the lines PinText may insert from out and checks
// that what is left is src, byte for byte; the one other change allowed
// is a line ending after a last line that had none.
func onlyInserted(t *testing.T, src, out []byte) {
	t.Helper()
	// A BOM is not part of the first line (PinText keeps it, which the
	// tests check on their own): a file of only a BOM is an empty file.
	src, out = stripBOM(src), stripBOM(out)
	in := splitLines(string(src))
	if len(src) == 0 {
		in = nil
	}
	var kept strings.Builder
	i := 0
	for n, l := range splitLines(string(out)) {
		switch {
		case i < len(in) && l == in[i]:
			kept.WriteString(l)
			i++
		case i == len(in)-1 && !strings.HasSuffix(in[i], "\n") && strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r") == in[i]:
			kept.WriteString(in[i])
			i++
		case insertedLine.MatchString(l):
		default:
			t.Fatalf("output line %d %q is neither an input line nor an inserted one\n%s", n+1, l, out)
		}
	}
	if kept.String() != string(src) {
		t.Fatalf("the output without its inserted lines is not the input:\n%q\n%q", kept.String(), src)
	}
}

func TestPinTextRefuses(t *testing.T) {
	tests := []struct {
		file    string
		want    error
		mention string
	}{
		{"conflict-cpu", ErrConflict, `torch = {index = 'pytorch-cpu'}`},
		{"conflict-cu121", ErrConflict, `pytorch-cu121`},
		{"index-name-taken", ErrConflict, "https://mirror.example/whl/cu128"},
		{"inline-sources", ErrUnsupportedLayout, "by hand"},
		{"dotted-sources", ErrUnsupportedLayout, "torch, torchvision"},
		{"top-dotted", ErrUnsupportedLayout, "[tool.uv.sources]"},
		{"inline-index", ErrUnsupportedLayout, "https://download.pytorch.org/whl/cu128"},
		{"inline-tool-uv", ErrUnsupportedLayout, "nothing was changed"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", "refuse", tt.file+".toml"))
			if err != nil {
				t.Fatal(err)
			}
			out, changed, err := PinText(src, base, tag, []string{"torch", "torchvision"})
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("err = %v, want %v mentioning %q", err, tt.want, tt.mention)
			}
			if out != nil || changed {
				t.Errorf("a refusal returned output (changed=%v)", changed)
			}
		})
	}
	_, _, err := PinText([]byte("[project\nname = 1\n"), base, tag, allPackages)
	var de *toml.DecodeError
	if !errors.As(err, &de) || errors.Is(err, ErrConflict) || errors.Is(err, ErrUnsupportedLayout) {
		t.Errorf("malformed TOML: %v", err)
	}
}

func TestScanTOMLSkipsStringsAndArrays(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "comments.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range scanTOML(string(src)).headers {
		got = append(got, strings.Join(h.key, "."))
	}
	if strings.Join(got, " ") != "project tool.uv tool.ruff" {
		t.Errorf("headers = %q", got)
	}
}

func TestPinIndex(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "comments.toml"))
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := PinText(src, base, tag, allPackages)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "pyproject.toml")
	if err := os.WriteFile(path, src, 0o640); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	defer func(f func() time.Time) { now = f }(now)
	now = func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }
	stale := path + ".gpucanary-bak-20260501T120000Z"
	if err := os.WriteFile(stale, []byte("an older backup"), 0o600); err != nil {
		t.Fatal(err)
	}

	res, err := PinIndex(path, base, tag, allPackages)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || res.Backup != stale+"-1" || !strings.Contains(res.Message, "now run `uv lock`") || !strings.Contains(res.Message, base+"/"+tag) {
		t.Errorf("result = %+v", res)
	}
	for file, wantData := range map[string]string{path: string(want), res.Backup: string(src), stale: "an older backup"} {
		if got, _ := os.ReadFile(file); string(got) != wantData {
			t.Errorf("%s holds %q, want %q", file, got, wantData)
		}
	}
	for _, file := range []string{path, res.Backup} {
		if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o640 {
			t.Errorf("%s has mode %v, want 0640", file, fi.Mode().Perm())
		}
	}
	if after, _ := os.Stat(path); os.SameFile(before, after) {
		t.Error("the file was rewritten in place, not replaced by a rename")
	}

	again, err := PinIndex(path, base, tag, allPackages)
	if err != nil || again.Changed || again.Backup != "" || !strings.Contains(again.Message, "already pinned") {
		t.Errorf("second run: %+v %v", again, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Errorf("%d files in the project, want pyproject.toml and two backups (no temp files)", len(ents))
	}
}

func TestPinIndexLeavesConflictsAlone(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "refuse", "conflict-cpu.toml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "pyproject.toml")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := PinIndex(path, base, tag, allPackages); !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v, want a conflict naming %s", err, path)
	}
	if got, _ := os.ReadFile(path); string(got) != string(src) {
		t.Error("a refused pin changed the file")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files, want no backup for a refused pin", len(ents))
	}
	if _, err := PinIndex(filepath.Join(dir, "missing.toml"), base, tag, allPackages); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestPinIndexFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "shared", "pyproject.toml")
	write(t, real, pyDirect)
	link := filepath.Join(dir, "pyproject.toml")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if _, err := PinIndex(link, base, tag, []string{"torch"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	if got, _ := os.ReadFile(real); !strings.Contains(string(got), "pytorch-cu128") {
		t.Error("the target was not pinned")
	}
}

func FuzzPinText(f *testing.F) {
	inputs, _ := filepath.Glob(filepath.Join("testdata", "*.toml"))
	refusals, _ := filepath.Glob(filepath.Join("testdata", "refuse", "*.toml"))
	for _, in := range append(inputs, refusals...) {
		b, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		var in map[string]any
		if toml.Unmarshal(stripBOM(src), &in) != nil {
			return
		}
		out, changed, err := PinText(src, base, tag, allPackages)
		if err != nil {
			return
		}
		var doc map[string]any
		if err := toml.Unmarshal(stripBOM(out), &doc); err != nil {
			t.Fatalf("the output is not TOML: %v\n%s", err, out)
		}
		if changed {
			onlyInserted(t, src, out)
		}
		again, changed, err := PinText(out, base, tag, allPackages)
		if err != nil || changed || string(again) != string(out) {
			t.Fatalf("not idempotent: changed=%v err=%v\n%s", changed, err, out)
		}
	})
}

func TestPinTextChecksArguments(t *testing.T) {
	src := []byte(pyDirect)
	tests := []struct {
		name, base, tag string
		packages        []string
	}{
		{"quote in the base", `https://x"y/whl`, tag, allPackages},
		{"not a URL", "download.pytorch.org/whl", tag, allPackages},
		{"space in the tag", base, "cu 128", allPackages},
		{"no packages", base, tag, nil},
		{"odd package name", base, tag, []string{"torch = 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if out, _, err := PinText(src, tt.base, tt.tag, tt.packages); err == nil || out != nil {
				t.Errorf("accepted: %s", out)
			}
		})
	}
}

// TestIndexURL: the tag joins the base's path, before a query or a
// fragment (issue 32, L10: …?token=x/cu124 was another URL).
func TestIndexURL(t *testing.T) {
	for _, c := range []struct{ base, want string }{
		{"https://download.pytorch.org/whl", "https://download.pytorch.org/whl/cu128"},
		{"https://download.pytorch.org/whl/", "https://download.pytorch.org/whl/cu128"},
		{"https://mirror.example/whl?token=abc", "https://mirror.example/whl/cu128?token=abc"},
		{"https://mirror.example/whl/?token=abc#frag", "https://mirror.example/whl/cu128?token=abc#frag"},
		{"https://ada:pw@mirror.example", "https://ada:pw@mirror.example/cu128"},
		{"file:///srv/whl", "file:///srv/whl/cu128"},
	} {
		if got := IndexURL(c.base, "cu128"); got != c.want {
			t.Errorf("IndexURL(%q) = %q, want %q", c.base, got, c.want)
		}
	}
}
