// Package e2e holds the desktop end-to-end test of the tray app (build tag
// e2e): scripts/e2e-desktop.sh runs it on Xvfb with a real session bus, a
// StatusNotifierWatcher and dunst.
package e2e
