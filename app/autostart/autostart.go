// Package autostart is "Start at login": an XDG autostart entry on Linux,
// a value in the user's Run key on Windows, both starting the program
// that is running now. It has no GUI code, so the resident tray, which
// keeps the entry pointing at where the program is (Repoint), and the
// Settings window share it.
package autostart

// appID is the application ID (FyneApp.toml), the autostart entry's name
// and icon.
const appID = "io.github.gpucanary"
