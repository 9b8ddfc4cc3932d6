package app

import (
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/autostart"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// find walks a canvas object tree (containers and widget renderers) for
// the first object match accepts.
func find(o fyne.CanvasObject, match func(fyne.CanvasObject) bool) fyne.CanvasObject {
	if o == nil {
		return nil
	}
	if match(o) {
		return o
	}
	var children []fyne.CanvasObject
	switch x := o.(type) {
	case *fyne.Container:
		children = x.Objects
	case fyne.Widget:
		children = test.WidgetRenderer(x).Objects()
	}
	for _, c := range children {
		if f := find(c, match); f != nil {
			return f
		}
	}
	return nil
}

// button finds the button labelled text in win's top dialog.
func dialogButton(t *testing.T, win fyne.Window, text string) *widget.Button {
	t.Helper()
	top := win.Canvas().Overlays().Top()
	b, _ := find(top, func(o fyne.CanvasObject) bool {
		b, ok := o.(*widget.Button)
		return ok && b.Text == text
	}).(*widget.Button)
	if b == nil {
		t.Fatalf("no %q button in the dialog on %q", text, win.Title())
	}
	return b
}

func pids(rows []monitor.Process) []int {
	var out []int
	for _, r := range rows {
		out = append(out, r.PID)
	}
	return out
}

func TestProcessesWindow(t *testing.T) {
	a := test.NewTempApp(t)
	var terminated []int
	u := newUI(a, Deps{Terminate: func(pid int, _ time.Time) error { terminated = append(terminated, pid); return nil }})
	p := newProcsWindow(u.wins)
	st := goldenState() // one state: its processes' start times name them
	p.refresh(st)

	t.Run("sorted by GPU memory, most first", func(t *testing.T) {
		if got := pids(p.rows); !slices.Equal(got, []int{4242, 5151}) {
			t.Errorf("rows = %v", got)
		}
	})
	t.Run("sorting on a column, then reversing it", func(t *testing.T) {
		for _, tc := range []struct {
			col  string
			want []int
		}{{"CPU %", []int{5151, 4242}}, {"CPU %", []int{4242, 5151}}, {"Verdict", []int{5151, 4242}}, {"Verdict", []int{4242, 5151}}, {"PID", []int{4242, 5151}}} {
			p.sortOn(slices.Index(procColumns, tc.col))
			if got := pids(p.rows); !slices.Equal(got, tc.want) {
				t.Errorf("after sorting on %s: %v, want %v", tc.col, got, tc.want)
			}
		}
		// The order is UI state, kept in Fyne's preferences.
		if again := newProcsWindow(u.wins); again.sortBy != slices.Index(procColumns, "PID") || again.desc {
			t.Errorf("a new window sorts on column %d (desc %v)", again.sortBy, again.desc)
		}
	})
	t.Run("the command line and verdict cells", func(t *testing.T) {
		row := p.rows[slices.IndexFunc(p.rows, func(r monitor.Process) bool { return r.PID == 5151 })]
		if c := cell(row, slices.Index(procColumns, "Command"), time.Now()); c != "python serve.py" {
			t.Errorf("command = %q", c)
		}
		if c := cell(row, slices.Index(procColumns, "GPU"), time.Now()); c != "-" {
			t.Errorf("GPU = %q", c)
		}
	})
	t.Run("Terminate only for a job stuck on the CPU, after confirming", func(t *testing.T) {
		p.sortOn(slices.Index(procColumns, "PID")) // ensure 4242, 5151
		if p.rows[0].PID != 4242 {
			p.sortOn(slices.Index(procColumns, "PID"))
		}
		p.table.Select(widget.TableCellID{Row: 0, Col: 0})
		if !p.term.Disabled() {
			t.Error("Terminate is offered for a job on the GPU")
		}
		p.table.Select(widget.TableCellID{Row: 1, Col: 0})
		if p.term.Disabled() {
			t.Fatal("Terminate is not offered for the job stuck on the CPU")
		}
		p.win.Show()
		test.Tap(p.term)
		test.Tap(dialogButton(t, p.win, "No"))
		if len(terminated) != 0 {
			t.Fatalf("terminated %v without confirmation", terminated)
		}
		test.Tap(p.term)
		test.Tap(dialogButton(t, p.win, "Yes"))
		if !slices.Equal(terminated, []int{5151}) {
			t.Errorf("terminated %v, want [5151]", terminated)
		}
	})
	t.Run("the selection follows its process, and ends with it", func(t *testing.T) {
		if p.rows[p.chosen].PID != 5151 {
			t.Fatalf("selected %d", p.rows[p.chosen].PID)
		}
		if w := p.why.Text; !strings.HasPrefix(w, "PID 5151 · python serve.py · cpu: ") || !strings.Contains(w, p.rows[p.chosen].Reason) {
			t.Errorf("why = %q", w)
		}
		p.sortOn(slices.Index(procColumns, "PID")) // now 5151 first
		if p.rows[0].PID != 5151 || p.chosen != 0 || p.term.Disabled() {
			t.Errorf("after reordering: rows %v, chosen row %d, Terminate disabled %v", pids(p.rows), p.chosen, p.term.Disabled())
		}
		p.refresh(st) // a refresh sorts again: still on 5151
		if p.rows[p.chosen].PID != 5151 || p.term.Disabled() {
			t.Errorf("after a refresh: chosen %d of %v", p.chosen, pids(p.rows))
		}
		// 5151 exits and its PID is reused by a process started later.
		s := st
		s.Processes = slices.Clone(st.Processes)
		for i := range s.Processes {
			if s.Processes[i].PID == 5151 {
				s.Processes[i].StartTime = s.Processes[i].StartTime.Add(time.Minute)
			}
		}
		p.refresh(s)
		if p.chosen != -1 || !p.term.Disabled() || p.why.Text != chooseHint {
			t.Errorf("the process exited, yet row %d is chosen (Terminate disabled %v, why %q)", p.chosen, p.term.Disabled(), p.why.Text)
		}
	})
}

// tableCells is every cell of a processes table on screen: its text (a
// badge's, in the verdict's column) and its background.
func tableCells(t *testing.T, p *procsWindow) map[string]color.Color {
	t.Helper()
	p.win.Content().Refresh()
	out := map[string]color.Color{}
	find(p.win.Content(), func(o fyne.CanvasObject) bool {
		box, ok := o.(*fyne.Container)
		if c := p.cells[box]; ok && c != nil && box.Visible() {
			text := c.label.Text
			if c.badge.Visible() {
				text = c.badge.Text
			}
			out[text] = c.bg.FillColor
		}
		return false
	})
	return out
}

// TestProcessesTableRow: a click on any cell selects the whole row, and
// every header shows whole, the command's included.
func TestProcessesTableRow(t *testing.T) {
	a := test.NewTempApp(t)
	u := newUI(a, Deps{})
	p := newProcsWindow(u.wins)
	p.win.Resize(procsSize)
	p.refresh(goldenState())
	row := slices.IndexFunc(p.rows, func(r monitor.Process) bool { return r.PID == 5151 })
	p.table.Select(widget.TableCellID{Row: row, Col: slices.Index(procColumns, "RSS")})
	if p.chosen != row || p.chosenPID != 5151 || p.term.Disabled() {
		t.Fatalf("a click on the RSS cell chose row %d (PID %d), Terminate disabled %v", p.chosen, p.chosenPID, p.term.Disabled())
	}
	selected := theme.Color(theme.ColorNameSelection)
	cells := tableCells(t, p)
	for _, text := range []string{"5151", "…e/ada/work/llm/.venv", "380.0", "12.0 GiB", "cpu · 3m25s", "python serve.py"} {
		if c, ok := cells[text]; !ok || c != selected {
			t.Errorf("cell %q of the chosen row: background %v (shown %v), want the selection colour", text, c, ok)
		}
	}
	for _, text := range []string{"4242", "101.0", "python train.py --epochs 10"} {
		if c := cells[text]; c == selected {
			t.Errorf("cell %q of the other row is marked as selected", text)
		}
	}
	// The selection follows its process when the rows change order.
	p.sortOn(slices.Index(procColumns, "PID"))
	p.sortOn(slices.Index(procColumns, "PID"))
	if cells := tableCells(t, p); p.rows[p.chosen].PID != 5151 || cells["python serve.py"] != selected || cells["python train.py --epochs 10"] == selected {
		t.Errorf("after a re-sort the mark is not on PID 5151 (chosen row %d of %v)", p.chosen, pids(p.rows))
	}
	// Not chosen, the job stuck on the CPU still stands out; the job on
	// the GPU does not.
	p.table.Select(widget.TableCellID{Row: slices.IndexFunc(p.rows, func(r monitor.Process) bool { return r.PID == 4242 }), Col: 0})
	cells = tableCells(t, p)
	if cells["python serve.py"] != tintCPU() || cells["cpu · 3m25s"] != tintCPU() || cells["python train.py --epochs 10"] != selected {
		t.Errorf("the job on the CPU's row is %v, the chosen row %v", cells["python serve.py"], cells["python train.py --epochs 10"])
	}

	headers := map[string]*widget.Button{}
	find(p.win.Content(), func(o fyne.CanvasObject) bool {
		if b, ok := o.(*widget.Button); ok && b.Visible() {
			headers[strings.TrimSuffix(strings.TrimSuffix(b.Text, sortMark[true]), sortMark[false])] = b
		}
		return false
	})
	for _, col := range procColumns {
		b := headers[col]
		switch {
		case b == nil:
			t.Errorf("no %q header on screen at %v", col, procsSize)
		case b.Size().Width < b.MinSize().Width:
			t.Errorf("header %q is clipped: %v wide, needs %v", b.Text, b.Size().Width, b.MinSize().Width)
		case b.Position().X+b.MinSize().Width > p.table.Size().Width:
			t.Errorf("header %q starts at %v, past the table's %v", b.Text, b.Position().X, p.table.Size().Width)
		case b.Position().X+b.Size().Width > p.table.Size().Width && b.Alignment != widget.ButtonAlignLeading:
			t.Errorf("header %q is centred on a column that runs past the window: its name is off screen", b.Text)
		}
	}
}

// stateEngine answers the windows with a state the test sets.
type stateEngine struct {
	fixedEngine
	state monitor.State
}

func (e *stateEngine) State() monitor.State { return e.state }

// labels are the texts of every label, check and badge ("[sm_80]")
// under o.
func labels(o fyne.CanvasObject) []string {
	var out []string
	find(o, func(o fyne.CanvasObject) bool {
		switch x := o.(type) {
		case *widget.Label:
			out = append(out, x.Text)
		case *widget.Check:
			out = append(out, x.Text)
		case *badge:
			out = append(out, "["+x.Text+"]")
		}
		return false
	})
	return out
}

// TestEnvironmentsWindow: "Remove from list" waits for a selection, and
// the evidence reads as a person would write it.
func TestEnvironmentsWindow(t *testing.T) {
	a := test.NewTempApp(t)
	eng := &stateEngine{state: monitor.State{Started: true}}
	u := newUI(a, Deps{Engine: eng})
	u.wins.showEnvs()
	e := u.wins.envs
	if !e.remove.Disabled() {
		t.Error("Remove from list is offered with no environment to remove")
	}
	eng.state = goldenState()
	u.render()
	if e.selected != eng.state.Envs[0].Path || e.remove.Disabled() {
		t.Errorf("after the first read: selected %q, Remove disabled %v", e.selected, e.remove.Disabled())
	}
	e.list.Select(1)
	test.Tap(e.remove)
	test.Tap(dialogButton(t, e.win, "Yes"))
	if e.selected != "" || !e.remove.Disabled() {
		t.Errorf("after removing: selected %q, Remove disabled %v", e.selected, e.remove.Disabled())
	}

	e.selected = eng.state.Envs[1].Path
	eng.state.Envs[1].CUDALibs = []pyenv.CUDALib{{Package: "llama-cpp-python", File: "/x/llama_cpp/lib/libggml-cuda.so", Kernels: "sm_86 sm_89 · PTX 80", SASS: []string{"sm_86", "sm_89"}, PTX: []string{"compute_80"}}}
	e.showDetail()
	shown := strings.Join(labels(e.detail), "\n")
	for _, want := range []string{"libggml-cuda.so (llama-cpp-python)\n[sm_86]\n[sm_89]\n[PTX 80]", `INSTALLER "uv"`, "lib/python3.12/site-packages/torch-2.10.0.dist-info/INSTALLER", "cuda, hip and xpu are None"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the evidence lacks %q:\n%s", want, shown)
		}
	}
	if strings.Contains(shown, `\n"`) {
		t.Errorf("the evidence shows a line end as an escape:\n%s", shown)
	}
}

func TestHistoryWindow(t *testing.T) {
	tu := newTestUI(t, a100)
	u, paths := tu.ui, tu.paths
	u.wins.showHistory()
	h := u.wins.history
	t0 := time.Now()
	for i, e := range []monitor.Event{
		{Kind: monitor.KindEnvAdded, Env: paths[0], Message: "added good"},
		{Kind: monitor.KindCUDAWheelReplaced, Env: paths[1], Message: "replaced in llm"},
		{Kind: monitor.KindGPUStateChanged, Message: "GPU changed"},
	} {
		e.Time = t0.Add(time.Duration(i) * time.Second)
		u.wins.event(e)
	}
	for _, tc := range []struct {
		filter string
		want   []string
	}{
		{allEnvs, []string{"GPU changed", "replaced in llm", "added good"}},
		{paths[1], []string{"replaced in llm"}},
		{paths[0], []string{"added good"}},
	} {
		name := filepath.Base(filepath.Dir(tc.filter))
		if tc.filter == allEnvs {
			name = "all"
		}
		t.Run(name, func(t *testing.T) {
			if !slices.Contains(h.filter.Options, tc.filter) {
				t.Fatalf("filter options %v lack %q", h.filter.Options, tc.filter)
			}
			h.filter.SetSelected(tc.filter)
			var got []string
			for _, e := range h.shown {
				got = append(got, e.Message)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("shown %v, want %v (newest first)", got, tc.want)
			}
		})
	}
	// The environments window reads the last change from the same events.
	if got := u.wins.lastChanged()[paths[1]]; !got.Equal(t0.Add(time.Second)) {
		t.Errorf("last change of %s = %v", paths[1], got)
	}
	if _, ok := u.wins.lastChanged()[""]; ok {
		t.Error("a machine event counts as an environment change")
	}
}

func TestSettingsWindow(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	u := newTestUI(t, a100).ui
	u.d.Config = config.Default()

	t.Run("a bad value is refused and nothing is written", func(t *testing.T) {
		u.wins.showSettings()
		f := u.wins.settingsForm
		f.refresh.SetText("soon")
		test.Tap(f.save)
		if _, err := os.Stat(u.d.ConfigPath); err == nil {
			t.Error("the settings file was written")
		}
		dialogButton(t, u.wins.settings, "OK")
	})
	t.Run("saved settings are what the command line reads", func(t *testing.T) {
		u.wins.showSettings()
		f := u.wins.settingsForm
		f.roots.SetText("/data/projects\n\n/scratch ")
		f.refresh.SetText("5s")
		f.percent.SetText("80")
		f.index.SetText("https://mirror.example/whl/")
		f.stall.SetText("15m")
		f.arm.SetText("90s")
		f.home.SetChecked(false)
		for code, c := range f.kinds {
			c.SetChecked(code == string(monitor.KindCUDAWheelReplaced) || code == string(monitor.KindJobOnCPU))
		}
		f.login.SetChecked(true)
		f.learn.SetChecked(true)
		test.Tap(f.save)
		got, err := config.Load(u.d.ConfigPath)
		if err != nil {
			t.Fatal(err)
		}
		want := config.Default()
		want.Roots = []string{"/data/projects", "/scratch"}
		want.Refresh.Duration = 5 * time.Second
		want.CPUFallbackPercent = 80
		want.IndexBase = "https://mirror.example/whl"
		want.DiscoverHome = false
		want.Notify = []string{string(monitor.KindCUDAWheelReplaced), string(monitor.KindJobOnCPU)}
		if !slices.Equal(got.Roots, want.Roots) || got.Refresh != want.Refresh || got.CPUFallbackPercent != want.CPUFallbackPercent ||
			got.IndexBase != want.IndexBase || got.DiscoverHome || !slices.Equal(got.Notify, want.Notify) || !got.KBRefresh ||
			got.StallWindow.Duration != 15*time.Minute || got.StallArmAfter.Duration != 90*time.Second {
			t.Errorf("saved %+v\nwant  %+v", got, want)
		}
		if u.d.Config.Refresh != want.Refresh {
			t.Error("the app did not take the saved settings")
		}
		if !autostart.Enabled() {
			t.Error("start at login was not set")
		}
		// Reopened, the form shows what was saved.
		u.wins.showSettings()
		if f := u.wins.settingsForm; f.refresh.Text != "5s" || f.home.Checked || len(f.selectedKinds()) != 2 || !f.login.Checked || !f.learn.Checked ||
			f.stall.Text != "15m0s" || f.arm.Text != "1m30s" {
			t.Errorf("reopened form: refresh %q home %v kinds %v login %v stall %q after %q", f.refresh.Text, f.home.Checked, f.selectedKinds(), f.login.Checked, f.stall.Text, f.arm.Text)
		}
		// The kinds are in words; the file keeps their codes.
		if c := u.wins.settingsForm.kinds[string(monitor.KindCUDAWheelReplaced)]; c.Text != "torch lost its CUDA build" || !c.Checked {
			t.Errorf("the CUDA_WHEEL_REPLACED check reads %q (checked %v)", c.Text, c.Checked)
		}
		for _, o := range labels(u.wins.settings.Content()) {
			if strings.Contains(o, "_") {
				t.Errorf("the Settings window shows a code: %q", o)
			}
		}
	})
}

func TestNoEnvironmentOffersAdd(t *testing.T) {
	a := test.NewTempApp(t)
	m, paths := engine(t, `{"devices": []}`)
	for _, p := range paths {
		m.Forget(p)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(m.State().Envs) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	u := newUI(a, Deps{Engine: m})
	u.render()
	u.wins.showEnvs()
	if txt := u.wins.envs.noGPU.Text; !strings.Contains(txt, "No NVIDIA driver") || !strings.Contains(txt, "still watches your environments") ||
		!strings.Contains(txt, "Add environment…") {
		t.Errorf("environments window says %q", txt)
	}
}

// TestProcessesWindowScans: the largest PID fits its column whole, the
// GPU's bar says when the GPU is simulated, and a disabled Terminate…
// says why.
func TestProcessesWindowScans(t *testing.T) {
	a := test.NewTempApp(t)
	u := newUI(a, Deps{})
	p := newProcsWindow(u.wins)
	if need := widget.NewLabel("4194304").MinSize().Width; p.widths[slices.Index(procColumns, "PID")] < need {
		t.Errorf("the PID column is %v wide; a 7-digit PID needs %v", p.widths[1], need)
	}
	st := goldenState()
	st.GPU.Simulated = true
	p.refresh(st)
	bar := p.bars.Objects[0].(*widget.ProgressBar)
	if text := bar.TextFormatter(); !strings.Contains(text, "(simulated)") {
		t.Errorf("the GPU's bar says %q", text)
	}
	p.table.Select(widget.TableCellID{Row: slices.IndexFunc(p.rows, func(r monitor.Process) bool { return r.PID == 4242 }), Col: 0})
	if !p.term.Disabled() || !strings.HasSuffix(p.why.Text, terminateOnlyFor) {
		t.Errorf("Terminate disabled %v, story %q", p.term.Disabled(), p.why.Text)
	}
}

// TestProcessesArrowKeys: Down and Up move the selection and its story,
// not an invisible focus band.
func TestProcessesArrowKeys(t *testing.T) {
	a := test.NewTempApp(t)
	u := newUI(a, Deps{})
	p := newProcsWindow(u.wins)
	p.win.Resize(procsSize)
	p.refresh(goldenState())
	keyed := p.keyed
	keyed.TypedKey(&fyne.KeyEvent{Name: fyne.KeyDown})
	if p.chosen != 0 || !strings.HasPrefix(p.why.Text, "PID "+strconv.Itoa(p.rows[0].PID)+" ") {
		t.Fatalf("Down from nothing chose row %d: %q", p.chosen, p.why.Text)
	}
	keyed.TypedKey(&fyne.KeyEvent{Name: fyne.KeyDown})
	keyed.TypedKey(&fyne.KeyEvent{Name: fyne.KeyDown}) // past the end stays on the last
	if p.chosen != len(p.rows)-1 {
		t.Errorf("after Down Down Down: row %d of %d", p.chosen, len(p.rows))
	}
	keyed.TypedKey(&fyne.KeyEvent{Name: fyne.KeyUp})
	if p.chosen != len(p.rows)-2 {
		t.Errorf("after Up: row %d", p.chosen)
	}
}

// endWatcher records the processes the windows asked to be told the
// end of.
type endWatcher struct {
	fixedEngine
	asked, quieted []int
}

func (e *endWatcher) WatchEnd(pid int, _ time.Time) error {
	e.asked = append(e.asked, pid)
	return nil
}

func (e *endWatcher) QuietJob(pid int, _ time.Time) error {
	e.quieted = append(e.quieted, pid)
	return nil
}

// procsOnEndWatcher is the Processes window on the golden state, its
// engine recording what it is asked of the processes' ends.
func procsOnEndWatcher(t *testing.T) (*procsWindow, *endWatcher) {
	a := test.NewTempApp(t)
	eng := &endWatcher{}
	d := goldenDeps()
	d.Engine = eng
	p := newProcsWindow(newUI(a, d).wins)
	p.refresh(goldenState())
	return p, eng
}

// TestTellMeWhenItEnds: "Tell me when it ends" asks the engine about the
// selected process (by PID and start time), then says it will, and is
// not offered again for that process; nothing chosen, nothing offered.
func TestTellMeWhenItEnds(t *testing.T) {
	p, eng := procsOnEndWatcher(t)
	if !p.end.Disabled() {
		t.Error("offered with no process chosen")
	}
	row := slices.IndexFunc(p.rows, func(r monitor.Process) bool { return r.PID == 4242 })
	p.table.Select(widget.TableCellID{Row: row, Col: 0})
	if p.end.Disabled() {
		t.Fatal("not offered for a process of this machine")
	}
	test.Tap(p.end)
	if !slices.Equal(eng.asked, []int{4242}) || !p.end.Disabled() || p.end.Text != willTell {
		t.Errorf("asked %v; the button says %q, disabled %v", eng.asked, p.end.Text, p.end.Disabled())
	}
}

// TestNotThisJob: "Not this job" is offered for a GPU job only; pressed,
// it asks the engine to quiet the job (by PID and start time) and says
// so, and is not offered again for it.
func TestNotThisJob(t *testing.T) {
	p, eng := procsOnEndWatcher(t)
	if !p.quiet.Disabled() {
		t.Error("offered with no process chosen")
	}
	for i, r := range p.rows {
		p.table.Select(widget.TableCellID{Row: i, Col: 0})
		if offered := !p.quiet.Disabled(); offered != (r.Job() && r.Measured()) {
			t.Errorf("PID %d (verdict %s): offered %v", r.PID, r.Verdict, offered)
		}
	}
	row := slices.IndexFunc(p.rows, func(r monitor.Process) bool { return r.PID == 4242 })
	p.table.Select(widget.TableCellID{Row: row, Col: 0})
	test.Tap(p.quiet)
	if !slices.Equal(eng.quieted, []int{4242}) || !p.quiet.Disabled() || p.quiet.Text != quietedJob {
		t.Errorf("quieted %v; the button says %q, disabled %v", eng.quieted, p.quiet.Text, p.quiet.Disabled())
	}
}

// TestHistoryReportJob: a JOB_ENDED row offers "Report", which asks
// for that job's report; another row offers nothing.
func TestHistoryReportJob(t *testing.T) {
	tu := newTestUI(t, a100)
	u := tu.ui
	var asked []int
	u.d.ReportJob = func(pid int) error { asked = append(asked, pid); return nil }
	u.wins.showHistory()
	h := u.wins.history
	t0 := time.Now()
	u.wins.event(monitor.Event{Time: t0, Kind: monitor.KindGPUStateChanged, Message: "GPU changed"})
	u.wins.event(monitor.Event{Time: t0.Add(time.Second), Kind: monitor.KindJobEnded, PID: 4242, Message: "train.py crashed",
		Job: &monitor.JobEnd{PID: 4242}})
	button := func(i int) *widget.Button {
		o := h.list.CreateItem()
		h.list.UpdateItem(i, o)
		return o.(*fyne.Container).Objects[1].(*fyne.Container).Objects[0].(*widget.Button)
	}
	if h.shown[0].Kind != monitor.KindJobEnded {
		t.Fatalf("shown %+v", h.shown)
	}
	b := button(0)
	if !b.Visible() || b.Text != "Report" {
		t.Fatalf("the JOB_ENDED row's button: visible %v, %q", b.Visible(), b.Text)
	}
	test.Tap(b)
	if !slices.Equal(asked, []int{4242}) {
		t.Errorf("asked for %v, want [4242]", asked)
	}
	if button(1).Visible() {
		t.Error("a GPU change offers a report")
	}
	u.d.ReportJob = nil
	if button(0).Visible() {
		t.Error("Report is offered with no one to write it")
	}
}
