package tray

import (
	"encoding/xml"
	"github.com/gpucanary/gpucanary/app/present"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/app/link"
)

// TestToastXML is the golden toast: the ToastGeneric template with the
// title and body as text, a launch argument naming the environment, and
// every hostile character escaped, so the document parses and shows what
// was written.
func TestToastXML(t *testing.T) {
	n := present.Note{
		Title: `torch lost its CUDA build in C:\Users\me\R&D <new>`,
		Body:  `Fix: & "C:\Users\me\R&D <new>\.venv\Scripts\python.exe" -m pip … ]]> 'quoted'` + "\x01",
		Env:   `C:\Users\me\R&D <new>\.venv`,
	}
	got := toastXML(n)
	want := `<toast launch="gpucanary:env=C%3A%5CUsers%5Cme%5CR%26D+%3Cnew%3E%5C.venv&amp;show=envs" activationType="foreground">` +
		`<visual><binding template="ToastGeneric">` +
		`<text hint-maxLines="2">torch lost its CUDA build in C:\Users\me\R&amp;D &lt;new&gt;</text>` +
		`<text>Fix: &amp; &#34;C:\Users\me\R&amp;D &lt;new&gt;\.venv\Scripts\python.exe&#34; -m pip … ]]&gt; &#39;quoted&#39;` + "\uFFFD" + `</text>` +
		`</binding></visual>` +
		`<actions><action content="Show" arguments="gpucanary:env=C%3A%5CUsers%5Cme%5CR%26D+%3Cnew%3E%5C.venv&amp;show=envs" activationType="foreground"></action></actions>` +
		`</toast>`
	if got != want {
		t.Errorf("toastXML =\n%s\nwant\n%s", got, want)
	}
	// It parses back to the same strings (Windows' XmlDocument.LoadXml
	// reads the same XML 1.0).
	var back struct {
		Launch string   `xml:"launch,attr"`
		Texts  []string `xml:"visual>binding>text"`
	}
	if err := xml.Unmarshal([]byte(got), &back); err != nil {
		t.Fatal(err)
	}
	if back.Texts[0] != n.Title || back.Texts[1] != strings.ReplaceAll(n.Body, "\x01", "\uFFFD") {
		t.Errorf("read back %q", back.Texts)
	}
	if r, ok := toastRequest(back.Launch); !ok || r != (link.Request{Show: link.ShowEnvs, Env: n.Env}) {
		t.Errorf("the launch argument reads back as %+v, %v", r, ok)
	}
}

// TestToastActions: a toast that carries the repair has a "Repair" button
// beside "Show", whose argument reads back as the repair of its
// environment; a toast about no environment has no buttons.
func TestToastActions(t *testing.T) {
	env := `C:\Users\me\R&D <new>\.venv`
	got := toastXML(present.Note{Title: "torch lost its CUDA build", Body: "b", Env: env, Repair: true})
	want := `<toast launch="gpucanary:env=C%3A%5CUsers%5Cme%5CR%26D+%3Cnew%3E%5C.venv&amp;show=envs" activationType="foreground">` +
		`<visual><binding template="ToastGeneric"><text hint-maxLines="2">torch lost its CUDA build</text><text>b</text></binding></visual>` +
		`<actions>` +
		`<action content="Show" arguments="gpucanary:env=C%3A%5CUsers%5Cme%5CR%26D+%3Cnew%3E%5C.venv&amp;show=envs" activationType="foreground"></action>` +
		`<action content="Repair" arguments="gpucanary:env=C%3A%5CUsers%5Cme%5CR%26D+%3Cnew%3E%5C.venv&amp;repair=1&amp;show=envs" activationType="foreground"></action>` +
		`</actions></toast>`
	if got != want {
		t.Errorf("toastXML =\n%s\nwant\n%s", got, want)
	}
	var back struct {
		Actions []struct {
			Content   string `xml:"content,attr"`
			Arguments string `xml:"arguments,attr"`
		} `xml:"actions>action"`
	}
	if err := xml.Unmarshal([]byte(got), &back); err != nil || len(back.Actions) != 2 {
		t.Fatalf("read back %+v, %v", back, err)
	}
	if r, ok := toastRequest(back.Actions[1].Arguments); !ok || r != (link.Request{Show: link.ShowEnvs, Env: env, Repair: env}) {
		t.Errorf("Repair's argument reads back as %+v, %v", r, ok)
	}
	if r, ok := toastRequest(back.Actions[0].Arguments); !ok || r != (link.Request{Show: link.ShowEnvs, Env: env}) {
		t.Errorf("Show's argument reads back as %+v, %v", r, ok)
	}
	if got := toastXML(present.ReportExported(`C:\r`)); strings.Contains(got, "<actions>") {
		t.Errorf("a toast about no environment has buttons: %s", got)
	}
	// A job that ended: its "Report" button asks for the job's report.
	got = toastXML(present.Note{Title: "train.py crashed", Body: "b", Job: 4242})
	if !strings.Contains(got, `<actions><action content="Report" arguments="gpucanary:report_job=4242" activationType="foreground"></action></actions>`) {
		t.Errorf("a job's toast: %s", got)
	}
}

// TestToastRequest: only GPU Canary's launch arguments open a window.
func TestToastRequest(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want link.Request
		ok   bool
	}{
		{toastLaunch(""), link.Request{Show: link.ShowEnvs}, true},
		{toastLaunch(`C:\a b`), link.Request{Show: link.ShowEnvs, Env: `C:\a b`}, true},
		{toastRepair(`C:\a b`), link.Request{Show: link.ShowEnvs, Env: `C:\a b`, Repair: `C:\a b`}, true},
		{"gpucanary:repair=1&show=envs", link.Request{}, false},
		{"gpucanary:env=x&repair=yes&show=envs", link.Request{}, false},
		{"gpucanary:show=settings", link.Request{}, false},
		{"https://example.org", link.Request{}, false},
		{"gpucanary:%zz", link.Request{}, false},
		{toastReport(4242), link.Request{ReportJob: 4242}, true},
		{"gpucanary:report_job=x", link.Request{}, false},
		{"gpucanary:report_job=-1", link.Request{}, false},
		{"gpucanary:report_job=1&show=envs", link.Request{}, false},
	} {
		if got, ok := toastRequest(tc.in); ok != tc.ok || got != tc.want {
			t.Errorf("toastRequest(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestToastRegistration is the golden registration: the AppUserModelID
// with its display name, icon and activator, and the activator's server,
// all under HKEY_CURRENT_USER (no administrator needed).
func TestToastRegistration(t *testing.T) {
	got := toastRegistration(`C:\Users\me\Apps\GPU Canary\gpucanaryw.exe`, `C:\Users\me\AppData\Local\gpucanary\icon.png`)
	want := []regValue{
		{`Software\Classes\AppUserModelId\io.github.gpucanary`, "DisplayName", "GPU Canary"},
		{`Software\Classes\AppUserModelId\io.github.gpucanary`, "IconUri", `C:\Users\me\AppData\Local\gpucanary\icon.png`},
		{`Software\Classes\AppUserModelId\io.github.gpucanary`, "CustomActivator", "{7C5E3B1A-2F4D-4E8B-9A61-3D0C8B5E7F42}"},
		{`Software\Classes\CLSID\{7C5E3B1A-2F4D-4E8B-9A61-3D0C8B5E7F42}\LocalServer32`, "", `"C:\Users\me\Apps\GPU Canary\gpucanaryw.exe"`},
	}
	if !slices.Equal(got, want) {
		t.Errorf("toastRegistration =\n%q\nwant\n%q", got, want)
	}
}
