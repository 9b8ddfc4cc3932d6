package pyenv_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/fatbin/fatbintest"
	"github.com/gpucanary/gpucanary/monitor/filefacts"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestRecordFacts: what a RECORD lists is kept as a file fact for its
// stamp (filefacts), so the next read of the environment stats the
// RECORD instead of reading it: a fact put in place for the RECORD's
// stamp is what the next read answers, which shows the fact was used. A
// RECORD rewritten in place with its size and time put back has a new
// change time (Linux), and one with a new time is read again.
func TestRecordFacts(t *testing.T) {
	rd, _ := freshReader()
	lin := fatbintest.MustLoad(fatbintest.LinuxGGML)
	root := filepath.Join(t.TempDir(), "venv")
	if err := pyenvtest.Write(root, pyenvtest.Spec{}); err != nil {
		t.Fatal(err)
	}
	site := pyenvtest.SitePackages(root, pyenvtest.Spec{})
	dist := filepath.Join(site, "my_ext-1.0.dist-info")
	os.MkdirAll(filepath.Join(site, "my_ext"), 0o755)
	os.MkdirAll(dist, 0o755)
	os.WriteFile(filepath.Join(dist, "METADATA"), []byte("Metadata-Version: 2.1\nName: my-ext\nVersion: 1.0\n"), 0o644)
	for _, n := range []string{"liba.so", "libb.so"} {
		if err := lin.WriteSparse(filepath.Join(site, "my_ext", n)); err != nil {
			t.Fatal(err)
		}
	}
	record := filepath.Join(dist, "RECORD")
	write := func(lib string, at time.Time) {
		t.Helper()
		if err := os.WriteFile(record, []byte("my_ext/"+lib+",,\nmy_ext-1.0.dist-info/RECORD,,\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(record, at, at); err != nil {
			t.Fatal(err)
		}
	}
	libs := func() string {
		t.Helper()
		env, err := rd.Inspect(root, pyenv.InspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range env.CUDALibs {
			got = append(got, filepath.Base(l.File))
		}
		return strings.Join(got, " ")
	}
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	write("liba.so", at)
	if got := libs(); got != "liba.so" {
		t.Fatalf("first read: %q, want liba.so", got)
	}
	fi, err := os.Stat(record)
	if err != nil {
		t.Fatal(err)
	}
	rd.Facts.Put("record:libs", record, filefacts.Of(fi), "my_ext/libb.so")
	if got := libs(); got != "libb.so" {
		t.Errorf("an unchanged stamp: %q, want the kept fact libb.so (the RECORD was read again)", got)
	}
	if runtime.GOOS != "windows" { // no change time there: filefacts' stamp says so
		write("liba.so", at) // the same bytes, size and time, rewritten
		if got := libs(); got != "liba.so" {
			t.Errorf("a RECORD rewritten with its time put back: %q, want liba.so read again", got)
		}
	}
	write("libb.so", at.Add(time.Second))
	if got := libs(); got != "libb.so" {
		t.Errorf("a RECORD written anew: %q, want libb.so", got)
	}
}

// TestSiteFileFacts: a small site file (torch's INSTALLER) is kept as a
// file fact for its stamp, so the next read answers from the fact; the
// file rewritten in place at the same size with its time put back is
// read again (its change time differs, on Linux), as is one written anew.
func TestSiteFileFacts(t *testing.T) {
	rd, _ := freshReader()
	spec := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip"}}
	root := filepath.Join(t.TempDir(), "venv")
	if err := pyenvtest.Write(root, spec); err != nil {
		t.Fatal(err)
	}
	m, _ := filepath.Glob(filepath.Join(pyenvtest.SitePackages(root, spec), "torch-*.dist-info", "INSTALLER"))
	if len(m) != 1 {
		t.Fatalf("torch's INSTALLER: %v", m)
	}
	installer := m[0]
	write := func(content string, at time.Time) {
		t.Helper()
		if err := os.WriteFile(installer, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(installer, at, at); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		t.Helper()
		env, err := rd.Inspect(root, pyenv.InspectOptions{})
		if err != nil || env.Torch() == nil {
			t.Fatalf("%v %+v", err, env)
		}
		return env.Torch().Installer
	}
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	write("pip\n", at)
	if got := read(); got != "pip" {
		t.Fatalf("first read: installer %q, want pip", got)
	}
	fi, err := os.Stat(installer)
	if err != nil {
		t.Fatal(err)
	}
	rd.Facts.Put("site:content", installer, filefacts.Of(fi), "uv\n")
	if got := read(); got != "uv" {
		t.Errorf("an unchanged stamp: installer %q, want the kept fact uv (the file was read again)", got)
	}
	if runtime.GOOS == "linux" { // the change time: filefacts' stamp has it there
		write("pip\n", at) // the same bytes, size and time, rewritten
		if got := read(); got != "pip" {
			t.Errorf("INSTALLER rewritten with its time put back: installer %q, want pip read again", got)
		}
	}
	write("uv\n\n", at.Add(time.Second))
	if got := read(); got != "uv" {
		t.Errorf("INSTALLER written anew: installer %q, want uv", got)
	}
}
