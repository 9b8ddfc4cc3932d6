//go:build windows

package tray

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
)

// notify shows a toast through PowerShell and the WinRT notification API,
// as an unpackaged desktop app may.
func notify(title, body string) error {
	esc := func(s string) string {
		r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "''")
		return r.Replace(s)
	}
	script := `[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] > $null
[Windows.Data.Xml.Dom.XmlDocument, Windows.Data.Xml.Dom.XmlDocument, ContentType = WindowsRuntime] > $null
$xml = New-Object Windows.Data.Xml.Dom.XmlDocument
$xml.LoadXml('<toast><visual><binding template="ToastGeneric"><text>` + esc(title) + `</text><text>` + esc(body) + `</text></binding></visual></toast>')
[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier('GPU Canary').Show([Windows.UI.Notifications.ToastNotification]::new($xml))`
	cmd := exec.Command("powershell.exe", "-NoProfile", "-NonInteractive", "-Command", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{HideWindow: true}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("showing a notification: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func openFolder(path string) error { return exec.Command("explorer", path).Start() }

// trayHostMissing: Windows always has a notification area.
func trayHostMissing() bool { return false }

// waitTrayUp: the notification area is ready when systray says so.
func waitTrayUp() {}
