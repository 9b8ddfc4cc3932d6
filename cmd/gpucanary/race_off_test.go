//go:build !race

package main

// buildRace is empty when the tests run without -race (race_on_test.go).
var buildRace []string
