//go:build windows

package engine

// watchEnvFolders is false on Windows: a watch there locks the watched
// folder's parent against renames, so only site-packages itself is
// watched; deletions are found by the periodic rescan.
const watchEnvFolders = false
