// Package health turns what was read (environments, the GPU) into findings
// with stable codes (monitor/finding): what is wrong in the user's words,
// how bad it is, and the exact command that fixes it.
//
// Rules are pure functions of their inputs, so the tray, `check`, `watch`
// and the report always agree on what is wrong.
package health
