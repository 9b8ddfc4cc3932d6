// Package e2e holds the end-to-end test of the agent with a real
// Prometheus (build tag e2e): Debian's prometheus scrapes a real
// `gpucanary agent` every second with the shipped rules, and the test
// watches an alert fire when real pip overwrites a CUDA torch and resolve
// when `gpucanary fix` puts it back. scripts/test-prom.sh runs it.
package e2e
