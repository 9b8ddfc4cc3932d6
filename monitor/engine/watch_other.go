//go:build !windows

package engine

// watchEnvFolders: besides site-packages, watch each environment's own
// folder, to see it deleted and recreated.
const watchEnvFolders = true
