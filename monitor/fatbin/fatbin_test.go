package fatbin_test

import (
	"io"
	"os"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/fatbin/fatbintest"
)

// counting counts the bytes read through it.
type counting struct {
	r     io.ReaderAt
	bytes int64
	calls int
}

func (c *counting) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.bytes += int64(n)
	c.calls++
	return n, err
}

// readBudget is what judging a library may cost: issue 28's 8 MB of
// the 159 MB libggml-cuda.so.
const readBudget = 8 << 20

// TestRealLibraries reads the carved headers of the real libggml-cuda.so
// and ggml-cuda.dll: what cuobjdump lists for them, read from headers
// only, within the budget.
func TestRealLibraries(t *testing.T) {
	for _, tc := range []struct {
		name, runtime string
	}{
		{fatbintest.LinuxGGML, "libcudart.so.13"},
		{fatbintest.WindowsGGML, ""}, // cudart is linked statically into the DLL
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fatbintest.MustLoad(tc.name)
			r := &counting{r: c}
			k, err := fatbin.Read(r, c.Size)
			if err != nil {
				t.Fatal(err)
			}
			if got := k.String(); got != fatbintest.GGMLKernels {
				t.Errorf("kernels %q, want %q", got, fatbintest.GGMLKernels)
			}
			if k.Runtime != tc.runtime || k.Containers != 143 {
				t.Errorf("runtime %q, %d containers; want %q, 143", k.Runtime, k.Containers, tc.runtime)
			}
			if r.bytes > readBudget {
				t.Errorf("read %d bytes of a %d-byte library, over the %d budget", r.bytes, c.Size, readBudget)
			}
			t.Logf("%d bytes in %d reads of %d", r.bytes, r.calls, c.Size)
		})
	}
}

func TestJudge(t *testing.T) {
	c := fatbintest.MustLoad(fatbintest.LinuxGGML)
	k, err := fatbin.Read(c, c.Size)
	if err != nil {
		t.Fatal(err)
	}
	arch := func(s string) fatbin.Arch {
		a, ok := fatbin.ParseArch(s)
		if !ok {
			t.Fatalf("ParseArch(%q) failed", s)
		}
		return a
	}
	aSpecific := fatbin.Kernels{SASS: []fatbin.Arch{arch("sm_90a")}, PTX: []fatbin.Arch{arch("compute_90a")}}
	family := fatbin.Kernels{SASS: []fatbin.Arch{arch("sm_100f")}, PTX: []fatbin.Arch{arch("compute_100f")}}
	for _, tc := range []struct {
		k    fatbin.Kernels
		gpu  string
		want fatbin.Support
		by   string
	}{
		{k, "6.1", fatbin.Missing, ""},        // GTX 1080 Ti
		{k, "7.0", fatbin.Missing, ""},        // V100: PTX 75 is above it
		{k, "7.5", fatbin.JIT, "compute_75"},  // RTX 2080
		{k, "8.0", fatbin.JIT, "compute_80"},  // A100
		{k, "8.6", fatbin.Runs, "sm_86"},      // RTX 3060
		{k, "8.7", fatbin.Runs, "sm_86"},      // Orin: 8.6 code runs on 8.7
		{k, "8.9", fatbin.Runs, "sm_89"},      // RTX 4090
		{k, "9.0", fatbin.JIT, "compute_90"},  // H100
		{k, "10.0", fatbin.JIT, "compute_90"}, // B200
		{k, "12.0", fatbin.Runs, "sm_120"},    // RTX 5090
		{k, "12.1", fatbin.Runs, "sm_121"},    // DGX Spark
		{aSpecific, "9.0", fatbin.Runs, "sm_90a"},
		{aSpecific, "10.0", fatbin.Missing, ""}, // neither sm_90a nor compute_90a runs elsewhere
		{family, "10.3", fatbin.Runs, "sm_100f"},
		{family, "12.0", fatbin.Missing, ""},
		{fatbin.Kernels{}, "8.6", fatbin.Missing, ""},
	} {
		got, by := tc.k.Judge(arch(tc.gpu))
		name := ""
		if got == fatbin.Runs {
			name = by.SM()
		} else if got == fatbin.JIT {
			name = by.Compute()
		}
		if got != tc.want || name != tc.by {
			t.Errorf("%s on %s: %v by %q, want %v by %q", tc.k, tc.gpu, got, name, tc.want, tc.by)
		}
	}
}

func TestParseArch(t *testing.T) {
	for in, want := range map[string]string{"8.6": "sm_86", "86": "sm_86", "sm_120": "sm_120", "compute_90a": "sm_90a", "sm_100f": "sm_100f", "12.1": "sm_121"} {
		a, ok := fatbin.ParseArch(in)
		if !ok || a.SM() != want {
			t.Errorf("ParseArch(%q) = %v %v, want %s", in, a.SM(), ok, want)
		}
	}
	for _, in := range []string{"", "x", "8.", "8.10", "sm_", "9"} {
		if a, ok := fatbin.ParseArch(in); ok {
			t.Errorf("ParseArch(%q) = %v, want not ok", in, a)
		}
	}
}

// BenchmarkReadReal reads the real 159 MB libggml-cuda.so from the npm
// cache (testdata/real_test.go fetches it; skipped without it), and the
// carved copy, which reads the same bytes from memory.
func BenchmarkReadReal(b *testing.B) {
	path := realLibrary(b, false, linuxPkg)
	f, err := os.Open(path)
	if err != nil {
		b.Skipf("the real library is not fetched: %v", err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	r := &counting{r: f}
	for b.Loop() {
		if _, err := fatbin.Read(r, fi.Size()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(r.bytes)/float64(b.N), "bytes-read/op")
}

func BenchmarkReadCarved(b *testing.B) {
	c := fatbintest.MustLoad(fatbintest.LinuxGGML)
	for b.Loop() {
		if _, err := fatbin.Read(c, c.Size); err != nil {
			b.Fatal(err)
		}
	}
}
