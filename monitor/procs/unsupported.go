//go:build !linux && !windows

package procs

import (
	"context"
	"errors"
)

// errUnsupported is what Scan says where no scanner is written yet.
var errUnsupported = errors.New("listing processes is not supported on this platform yet")

// unsupported is the Source of a platform without a process scanner: it
// says so rather than return an empty list that reads as "nothing runs".
type unsupported struct{}

func (unsupported) Scan(context.Context) ([]Proc, error) { return nil, errUnsupported }

func (unsupported) Installer(context.Context, string) *Installer { return nil }
