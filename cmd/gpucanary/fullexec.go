package main

// fullName is the full build's file name (without .exe), installed in
// the lean build's folder: make cli builds bin/gpucanary-cli lean
// (-tags nogui,lean, fullexec_lean.go) and bin/gpucanary-full with every
// command's code, which the lean one runs for agent, kb refresh and
// check --format prom.
const fullName = "gpucanary-full"
