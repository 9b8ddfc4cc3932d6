//go:build !unix

package tty

import (
	"context"
	"os"
)

// Keys reads no keys on this platform: a live view stops on Ctrl-C.
func Keys(context.Context, *os.File) (<-chan byte, func(), error) {
	return nil, func() {}, nil
}
