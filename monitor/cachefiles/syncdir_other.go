//go:build !unix

package cachefiles

// syncDir does nothing where a folder cannot be synced (Windows: a
// rename is made durable by the file system's own journal, and a folder
// cannot be opened for FlushFileBuffers without backup rights).
func syncDir(string) error { return nil }
