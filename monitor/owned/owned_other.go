//go:build !unix && !windows

package owned

import "errors"

var errUnknown = errors.New("this system's file ownership is not known to GPU Canary")

func checkLeaf(path string, _ Policy) error {
	return &Untrusted{Path: path, Owner: "unknown", Why: errUnknown.Error()}
}
func checkParent(string) error { return nil }
