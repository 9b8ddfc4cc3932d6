package tray

import (
	"encoding/xml"
	"net/url"
	"strconv"
	"strings"

	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/present"
)

// Windows shows a toast of an unpackaged program only when the program's
// AppUserModelID is registered with a display name (per user, under
// HKEY_CURRENT_USER, no administrator needed); without it the toast is
// dropped without a word. With a COM activator registered too, toasts
// stay in the Action Center and a click reaches the program, which opens
// the environment the toast is about. The values are data here, so the
// Linux tests check them; toast_windows.go writes them and pushes the
// toasts through git.sr.ht/~jackmordaunt/go-toast/v2.

const (
	// toastAppID is GPU Canary's AppUserModelID (FyneApp.toml's ID).
	toastAppID = "io.github.gpucanary"
	// toastName is what Windows shows above each toast and in Settings.
	toastName = "GPU Canary"
	// toastActivator is the CLSID of the COM class a click on a toast is
	// delivered to, GPU Canary's own (generated once; never change it, or
	// toasts already in the Action Center lose their way back).
	toastActivator = "{7C5E3B1A-2F4D-4E8B-9A61-3D0C8B5E7F42}"
	// toastScheme starts a toast's launch argument.
	toastScheme = "gpucanary:"
)

// regValue is one string value under HKEY_CURRENT_USER.
type regValue struct {
	Key, Name, Value string
}

// toastRegistration is what registers GPU Canary's toasts for this user:
// the AppUserModelID with its name, icon and activator, and the activator's
// class, started from exe when a toast is clicked while GPU Canary is not
// running (Windows adds -Embedding to the command line).
func toastRegistration(exe, icon string) []regValue {
	app := `Software\Classes\AppUserModelId\` + toastAppID
	return []regValue{
		{app, "DisplayName", toastName},
		{app, "IconUri", icon},
		{app, "CustomActivator", toastActivator},
		{`Software\Classes\CLSID\` + toastActivator + `\LocalServer32`, "", `"` + exe + `"`},
	}
}

// toastLaunch is the launch argument of a toast about env: what the click
// (or its "Show" button) hands back to GPU Canary.
func toastLaunch(env string) string {
	q := url.Values{"show": {link.ShowEnvs}}
	if env != "" {
		q.Set("env", env)
	}
	return toastScheme + q.Encode()
}

// toastRepair is the argument of a toast's "Repair" button: the
// Environments window on env, and its repair.
func toastRepair(env string) string {
	return toastScheme + url.Values{"show": {link.ShowEnvs}, "env": {env}, "repair": {"1"}}.Encode()
}

// toastReport is the argument of a toast's "Report" button: the report
// on the job pid.
func toastReport(pid int) string {
	return toastScheme + url.Values{"report_job": {strconv.Itoa(pid)}}.Encode()
}

// toastRequest reads a launch or button argument back into the request
// for the windows; ok is false for one that is not GPU Canary's.
func toastRequest(launch string) (link.Request, bool) {
	rest, ok := strings.CutPrefix(launch, toastScheme)
	if !ok {
		return link.Request{}, false
	}
	q, err := url.ParseQuery(rest)
	if err == nil && q.Has("report_job") {
		pid, err := strconv.Atoi(q.Get("report_job"))
		if err != nil || pid <= 0 || len(q) != 1 {
			return link.Request{}, false
		}
		return link.Request{ReportJob: pid}, true
	}
	if err != nil || q.Get("show") != link.ShowEnvs {
		return link.Request{}, false
	}
	r := link.Request{Show: link.ShowEnvs, Env: q.Get("env")}
	switch q.Get("repair") {
	case "":
	case "1":
		if r.Env == "" {
			return link.Request{}, false
		}
		r.Repair = r.Env
	default:
		return link.Request{}, false
	}
	return r, true
}

// toastXML is the toast for n (the ToastGeneric template: the title, then
// the body), which a click activates in the foreground with its launch
// argument. A toast about an environment has buttons: "Show", and
// "Repair" when it carries the repair, each activating GPU Canary (through
// the registered AppUserModelID, as a click does) with its argument. Every
// string is escaped as XML text or attribute, so a folder named
// `<a href=…>` or `]]>` shows as written.
func toastXML(n present.Note) string {
	type text struct {
		XMLName  xml.Name `xml:"text"`
		MaxLines string   `xml:"hint-maxLines,attr,omitempty"`
		Text     string   `xml:",chardata"`
	}
	type action struct {
		Content        string `xml:"content,attr"`
		Arguments      string `xml:"arguments,attr"`
		ActivationType string `xml:"activationType,attr"`
	}
	type toast struct {
		XMLName        xml.Name `xml:"toast"`
		Launch         string   `xml:"launch,attr"`
		ActivationType string   `xml:"activationType,attr"`
		Binding        struct {
			Template string `xml:"template,attr"`
			Texts    []text
		} `xml:"visual>binding"`
		Actions *struct {
			Action []action `xml:"action"`
		} `xml:"actions"`
	}
	t := toast{Launch: toastLaunch(n.Env), ActivationType: "foreground"}
	t.Binding.Template = "ToastGeneric"
	t.Binding.Texts = []text{{MaxLines: "2", Text: n.Title}, {Text: n.Body}}
	var actions []action
	if n.Env != "" {
		actions = append(actions, action{Content: present.ActionShow, Arguments: toastLaunch(n.Env), ActivationType: "foreground"})
		if n.Repair {
			actions = append(actions, action{Content: present.ActionRepair, Arguments: toastRepair(n.Env), ActivationType: "foreground"})
		}
	}
	if n.Job != 0 {
		actions = append(actions, action{Content: present.ActionReport, Arguments: toastReport(n.Job), ActivationType: "foreground"})
	}
	if len(actions) > 0 {
		t.Actions = &struct {
			Action []action `xml:"action"`
		}{actions}
	}
	// Marshal cannot fail on these types; a character XML cannot carry
	// (a control character in a folder's name) is written as U+FFFD.
	b, _ := xml.Marshal(t)
	return string(b)
}
