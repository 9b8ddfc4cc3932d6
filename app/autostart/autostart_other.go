//go:build !linux && !windows

package autostart

import "errors"

func Enabled() bool { return false }

func Set(bool) error { return errors.New("start at login is not supported on this platform") }

func Repoint() (bool, error) { return false, nil }
