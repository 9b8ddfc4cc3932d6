//go:build race

package main

// buildRace is the -race flag for binaries the tests build, when the
// tests themselves run with it: the packages the test binary compiled
// are then the binaries' too, and a fresh machine compiles every
// dependency once, not once more without the race detector.
var buildRace = []string{"-race"}
