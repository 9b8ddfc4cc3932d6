// Package assets embeds GPU Canary's icons. The tray icons are a status
// light, one PNG per state; scripts/genicons draws them.
package assets

import _ "embed"

// Tray icons, one per overall state, and the application icon.
var (
	//go:embed tray-healthy.png
	TrayHealthy []byte
	//go:embed tray-warning.png
	TrayWarning []byte
	//go:embed tray-error.png
	TrayError []byte
	//go:embed tray-nodriver.png
	TrayNoDriver []byte
	//go:embed tray-simulated.png
	TraySimulated []byte
	//go:embed icon.png
	AppIcon []byte
)
