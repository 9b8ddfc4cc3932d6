package monitortest

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"testing"
)

// FileState is what a test compares to prove a file was left alone: its
// type and permissions, its size, and (for a regular file) the hash of
// every byte. Replacing a FIFO with a file, or a file with a shorter one,
// changes it.
type FileState struct {
	Mode   fs.FileMode
	Size   int64
	SHA256 string
}

// StateOf reads the FileState of path (not following a symlink). A FIFO
// is not opened, so this never blocks.
func StateOf(t testing.TB, path string) FileState {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := FileState{Mode: fi.Mode(), Size: fi.Size()}
	if !fi.Mode().IsRegular() {
		return st
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	st.SHA256 = hex.EncodeToString(h.Sum(nil))
	return st
}

// SparseFile writes a file of size bytes at path without using the disk
// for them: a few bytes of text, then a hole. It stands for a file over a
// read limit (hundreds of megabytes) at no cost.
func SparseFile(t testing.TB, path string, size int64) {
	t.Helper()
	if err := os.WriteFile(path, []byte(`{"format": "gpucanary-state/1", "planted": true`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}
