// Package fix runs the repair monitor/fixplan plans: the installer in its
// own process group under a guardian that stops it if GPU Canary dies, a
// journal appended as it goes (monitor/fixjournal), a graceful stop, and a
// verification by the health rules' findings (Reinstallable). Service is
// the repair as a whole (plan, in-use guard, run with a journal,
// verification), which `gpucanary fix` and the tray's windows both call.
package fix
