//go:build windows && (amd64 || arm64)

package gpu

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// The stand-in nvml.dll (testdata/nvmlstub/nvml.c) is built by
// scripts/test-windows.sh, which runs these tests under wine and names the
// folder holding nvml.dll and nvml-old.dll (built -DNVMLSTUB_OLD) in
// GPUCANARY_NVMLSTUB_DIR. The tests put the stand-in where the product
// looks for the real one (System32, or NVSMI for old drivers) and take it
// away after.

const stubDirEnv = "GPUCANARY_NVMLSTUB_DIR"

// Variants of the stand-in.
const (
	stubCurrent = "nvml.dll"
	stubOld     = "nvml-old.dll"
)

// installStub copies the stand-in variant to dest for this test. A real
// nvml.dll there (a machine with an NVIDIA driver) is never replaced: the
// test is skipped.
func installStub(t testing.TB, variant, dest string) {
	t.Helper()
	dir := os.Getenv(stubDirEnv)
	if dir == "" {
		t.Skipf("%s is not set: scripts/test-windows.sh builds the stand-in nvml.dll and runs these tests under wine", stubDirEnv)
	}
	if _, err := os.Stat(dest); err == nil {
		t.Skipf("%s exists (an NVIDIA driver is installed); the stand-in needs a machine without one, such as wine", dest)
	}
	data, err := os.ReadFile(filepath.Join(dir, variant))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dest, data, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.Remove(dest); err != nil {
			t.Errorf("removing the stand-in: %v", err)
		}
	})
}

// requireNoNVML skips unless neither place the product looks has an nvml.dll.
func requireNoNVML(t testing.TB) {
	t.Helper()
	for _, p := range []string{systemNVMLPath(), nvsmiNVMLPath()} {
		if _, err := os.Stat(p); err == nil {
			t.Skipf("%s exists (an NVIDIA driver is installed)", p)
		}
	}
}

// useScenario selects the stand-in's scenario and returns a function that
// reads the symbols it has been called through since.
func useScenario(t testing.TB, name string) (calls func() []string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "calls.log")
	t.Setenv("NVMLSTUB_SCENARIO", name)
	t.Setenv("NVMLSTUB_LOG", log)
	return func() []string {
		data, err := os.ReadFile(log)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return strings.Fields(string(data))
	}
}

// openStub opens the backend the way the product does, with the counters
// newCounters makes, closing it when the test ends.
func openStub(t testing.TB, logs io.Writer, newCounters func(*slog.Logger) processCounters) Backend {
	t.Helper()
	o := Options{}
	if logs != nil {
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	b := openNVMLDLL(o, newCounters)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	return libraryChecked{b, t}
}

// libraryChecked checks that each snapshot names the nvml.dll it was read
// from (State.Library, which the report shows), then leaves it out, so the
// scenarios' states compare as they are.
type libraryChecked struct {
	Backend
	t testing.TB
}

func (l libraryChecked) Snapshot(ctx context.Context) State {
	st := l.Backend.Snapshot(ctx)
	if st.Source == "nvml" && (!filepath.IsAbs(st.Library) || !strings.EqualFold(filepath.Base(st.Library), "nvml.dll")) {
		l.t.Errorf("State.Library = %q, want the path of the nvml.dll read", st.Library)
	}
	st.Library = ""
	return st
}

func TestDLLReadsEverything(t *testing.T) {
	tests := []struct {
		name, variant, scenario string
		want                    State
		// called must all be called; never must not be.
		called, never []string
	}{
		{"A100 on a current data-center driver", stubCurrent, "a100", a100State(),
			[]string{"nvmlInit_v2", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetPciInfo_v3",
				"nvmlSystemGetCudaDriverVersion_v2", "nvmlDeviceGetComputeRunningProcesses_v3",
				"nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetMPSComputeRunningProcesses_v3", "nvmlDeviceGetMigMode"},
			[]string{"nvmlInit", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetComputeRunningProcesses"}},
		{"A100 on an old driver without the _v3 symbols", stubOld, "a100", a100State(),
			[]string{"nvmlInit_v2", "nvmlDeviceGetPciInfo_v2", "nvmlSystemGetCudaDriverVersion", "nvmlDeviceGetComputeRunningProcesses",
				"nvmlDeviceGetGraphicsRunningProcesses", "nvmlDeviceGetProcessUtilization"},
			[]string{"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetMPSComputeRunningProcesses",
				"nvmlDeviceGetMigMode", "nvmlSystemGetCudaDriverVersion_v2"}},
		{"RTX 4090 on a 566 driver under WDDM", stubCurrent, "rtx4090-wddm", rtx4090State(),
			[]string{"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetProcessUtilization"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireNoNVML(t)
			installStub(t, tt.variant, systemNVMLPath())
			calls := useScenario(t, tt.scenario)
			b := openStub(t, nil, nil)
			if got := b.Snapshot(context.Background()); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("state\n got %s\nwant %s", dump(got), dump(tt.want))
			}
			got := calls()
			for _, s := range tt.called {
				if !slices.Contains(got, s) {
					t.Errorf("%s was not called; calls: %v", s, got)
				}
			}
			for _, s := range tt.never {
				if slices.Contains(got, s) {
					t.Errorf("%s was called; calls: %v", s, got)
				}
			}
		})
	}
}

// TestDLLSecondSnapshotAsksOnlyForNewSamples: the samples already read are
// not read again, so an idle GPU reads 0 %.
func TestDLLSecondSnapshotAsksOnlyForNewSamples(t *testing.T) {
	requireNoNVML(t)
	installStub(t, stubCurrent, systemNVMLPath())
	useScenario(t, "a100")
	b := openStub(t, nil, nil)
	b.Snapshot(context.Background())
	p := b.Snapshot(context.Background()).Devices[0].Processes[0]
	if p.SMPercent == nil || *p.SMPercent != 0 || p.MemPercent == nil || *p.MemPercent != 0 {
		t.Errorf("second snapshot of an idle GPU = %s", dump(p))
	}
}

// TestDLLListGrowingBetweenCalls: a process list that grows between the
// call that sizes it and the call that reads it is asked again, whole.
func TestDLLListGrowingBetweenCalls(t *testing.T) {
	requireNoNVML(t)
	installStub(t, stubCurrent, systemNVMLPath())
	calls := useScenario(t, "a100-growing")
	b := openStub(t, nil, nil)
	st := b.Snapshot(context.Background())
	var pids []int
	for _, p := range st.Devices[0].Processes {
		pids = append(pids, p.PID)
	}
	if want := []int{4242, 4243, 4244, 4245, 4246, 4247}; !reflect.DeepEqual(pids, want) || st.Devices[0].Error != "" {
		t.Errorf("pids %v (error %q), want %v", pids, st.Devices[0].Error, want)
	}
	n := 0
	for _, c := range calls() {
		if c == "nvmlDeviceGetComputeRunningProcesses_v3" {
			n++
		}
	}
	if n != listTries {
		t.Errorf("the compute list was asked %d times, want %d", n, listTries)
	}
}

// TestDLLInitFailureCallsNothingElse: after a failed nvmlInit no other
// NVML function is called, the DLL is released, and the state says why in
// one line.
func TestDLLInitFailureCallsNothingElse(t *testing.T) {
	requireNoNVML(t)
	dest := systemNVMLPath()
	installStub(t, stubCurrent, dest)
	calls := useScenario(t, "fail")
	b := openStub(t, nil, nil)
	for range 2 {
		st := b.Snapshot(context.Background())
		want := "NVML could not start: the NVIDIA driver is not loaded (" + dest + ")"
		if st.HasDriver() || st.Source != "none" || !strings.EqualFold(st.Error, want) {
			t.Errorf("state = %s, want error %q", dump(st), want)
		}
	}
	if got := calls(); !reflect.DeepEqual(got, []string{"nvmlInit_v2"}) {
		t.Errorf("calls = %v, want only nvmlInit_v2", got)
	}
	var h windows.Handle
	name, _ := windows.UTF16PtrFromString("nvml.dll")
	if err := windows.GetModuleHandleEx(windows.GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT, name, &h); err == nil {
		t.Error("nvml.dll is still loaded after a failed nvmlInit")
	}
}

// TestDLLMissing: without nvml.dll the state is "no NVIDIA driver" and
// says where it looked, in one line.
func TestDLLMissing(t *testing.T) {
	requireNoNVML(t)
	st := openStub(t, nil, nil).Snapshot(context.Background())
	if st.HasDriver() || st.Source != "none" || strings.Contains(st.Error, "\n") ||
		!strings.Contains(st.Error, "nvml.dll was not found in "+filepath.Dir(systemNVMLPath())) ||
		!strings.Contains(st.Error, filepath.Dir(nvsmiNVMLPath())) {
		t.Errorf("state = %s", dump(st))
	}
}

// TestDLLNeverFromProgramFolderOrWorkingDir: an nvml.dll beside the
// program, in the working directory or on PATH is never loaded: anyone
// who can write there could run code in GPU Canary.
func TestDLLNeverFromProgramFolderOrWorkingDir(t *testing.T) {
	requireNoNVML(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	onPath := t.TempDir()
	for _, dir := range []string{filepath.Dir(exe), cwd, onPath} {
		installStub(t, stubCurrent, filepath.Join(dir, "nvml.dll"))
	}
	t.Chdir(cwd)
	t.Setenv("PATH", onPath+string(os.PathListSeparator)+os.Getenv("PATH"))
	calls := useScenario(t, "a100")
	st := openStub(t, nil, nil).Snapshot(context.Background())
	if st.HasDriver() || !strings.Contains(st.Error, "was not found") {
		t.Errorf("state = %s", dump(st))
	}
	if got := calls(); len(got) != 0 {
		t.Errorf("a planted nvml.dll was called: %v", got)
	}
}

// TestDLLOldDriverInNVSMI: drivers that kept nvml.dll under
// %ProgramFiles%\NVIDIA Corporation\NVSMI are found there.
func TestDLLOldDriverInNVSMI(t *testing.T) {
	requireNoNVML(t)
	dest := nvsmiNVMLPath()
	installStub(t, stubOld, dest)
	t.Cleanup(func() { os.Remove(filepath.Dir(dest)); os.Remove(filepath.Dir(filepath.Dir(dest))) })
	calls := useScenario(t, "a100")
	var logs bytes.Buffer
	if got, want := openStub(t, &logs, nil).Snapshot(context.Background()), a100State(); !reflect.DeepEqual(got, want) {
		t.Errorf("state\n got %s\nwant %s", dump(got), dump(want))
	}
	if !slices.Contains(calls(), "nvmlDeviceGetPciInfo_v2") {
		t.Errorf("not the old stand-in: calls %v", calls())
	}
	if !strings.Contains(strings.ToLower(logs.String()), strings.ToLower(strings.ReplaceAll(dest, `\`, `\\`))) {
		t.Errorf("the log does not say it loaded %s:\n%s", dest, logs.String())
	}
}

// TestDLLWDDMProcessUseFromCounters: under WDDM the memory and compute use
// NVML leaves out come from Windows' counters for the RTX 4090's adapter,
// not from the integrated GPU's.
func TestDLLWDDMProcessUseFromCounters(t *testing.T) {
	requireNoNVML(t)
	installStub(t, stubCurrent, systemNVMLPath())
	useScenario(t, "rtx4090-wddm")
	counters := &countersStub{uses: []processUse{
		{pid: 5120, luid: "0x00000000_0x0000D1B8", adapter: "01:00.0", dedicatedBytes: ptr(uint64(5 << 30)), computePercent: ptr(97.6)},
		{pid: 812, luid: "0x00000000_0x0000D1B8", adapter: "01:00.0", dedicatedBytes: ptr(uint64(300 << 20))},
		{pid: 812, luid: "0x00000000_0x0000A001", adapter: "00:02.0", dedicatedBytes: ptr(uint64(900 << 20)), computePercent: ptr(40.0)},
	}}
	st := openStub(t, nil, func(*slog.Logger) processCounters { return counters }).Snapshot(context.Background())
	want := rtx4090State()
	want.Devices[0].Processes = []Process{
		{PID: 5120, Type: "compute", UsedMemoryBytes: ptr(uint64(5 << 30)), SMPercent: ptr(uint32(98))},
		{PID: 812, Type: "graphics", UsedMemoryBytes: ptr(uint64(300 << 20))},
	}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("state\n got %s\nwant %s", dump(st), dump(want))
	}
}

// underWine reports whether this process runs under wine (ntdll exports
// wine_get_version there).
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// TestDLLWDDMWithoutCounters runs the real PDH reader where Windows' GPU
// counters do not exist (wine): the memory stays n/a, and that is said
// once, not on every snapshot.
func TestDLLWDDMWithoutCounters(t *testing.T) {
	if !underWine() {
		t.Skip("this checks a system without the GPU counters (wine); Windows 10 1709 and later have them")
	}
	requireNoNVML(t)
	installStub(t, stubCurrent, systemNVMLPath())
	useScenario(t, "rtx4090-wddm")
	var logs bytes.Buffer
	b := openStub(t, &logs, newPDHCounters)
	for range 3 {
		if got, want := b.Snapshot(context.Background()), rtx4090State(); !reflect.DeepEqual(got, want) {
			t.Errorf("state\n got %s\nwant %s", dump(got), dump(want))
		}
	}
	if n := strings.Count(logs.String(), "per-process GPU memory and use stay n/a"); n != 1 {
		t.Errorf("said %d times that the counters are missing:\n%s", n, logs.String())
	}
}

// BenchmarkSnapshotNVMLDLL is one snapshot through nvml.dll (the stand-in,
// one A100 with a process), to set beside BenchmarkSnapshotNVML on Linux.
func BenchmarkSnapshotNVMLDLL(b *testing.B) {
	requireNoNVML(b)
	installStub(b, stubCurrent, systemNVMLPath())
	b.Setenv("NVMLSTUB_SCENARIO", "a100")
	b.Setenv("NVMLSTUB_LOG", "")
	be := openStub(b, nil, nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if st := be.Snapshot(ctx); !st.HasDriver() || st.Error != "" {
			b.Fatalf("state = %s", dump(st))
		}
	}
}

// TestPDHCountersOnWindows reads the real GPU counters where Windows has
// them (10 1709 and later, any GPU): the query opens, two reads succeed,
// and every use names a process and an adapter. It proves the counter
// paths and the PDH struct layout on a real machine (make
// gpu-kit-windows).
func TestPDHCountersOnWindows(t *testing.T) {
	if underWine() {
		t.Skip("wine has no GPU counters (TestDLLWDDMWithoutCounters covers that)")
	}
	c := newPDHCounters(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer c.close()
	var uses []processUse
	for range 2 {
		var err error
		if uses, err = c.read(context.Background()); err != nil {
			t.Fatalf("reading the GPU counters: %v", err)
		}
	}
	for _, u := range uses {
		if _, _, ok := parseLUID(u.luid); !ok || u.pid < 0 {
			t.Errorf("use %+v", u)
		}
		t.Logf("pid %d adapter %q (luid %s): dedicated %s bytes, compute %s %%", u.pid, u.adapter, u.luid, dump(u.dedicatedBytes), dump(u.computePercent))
	}
	if len(uses) == 0 {
		t.Log("no process uses a GPU adapter right now")
	}
}
