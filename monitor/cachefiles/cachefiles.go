// Package cachefiles is what GPU Canary's files in the user's cache and
// state folders share: a file replaced whole, so that a reader sees the
// old one or the new one, and a daily sweep of the files nobody wrote for
// a while, so that the facts of deleted environments do not pile up.
//
// A cache file is replaced without a sync (Replace): its reader checks a
// checksum over the whole file, so one a crash left torn is a miss and is
// read afresh, and a check of a thousand environments writes a thousand
// such files, where a sync each would cost seconds.
package cachefiles

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Replace writes data to path through a new file in its folder (made
// 0700 when missing), dated at (what Sweep judges by), renamed over it.
// Nothing is synced: see the package comment.
func Replace(path string, data []byte, at time.Time) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	terr := os.Chtimes(f.Name(), at, at)
	if err := errors.Join(werr, cerr, terr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	return nil
}

// Daily sweeps dir (Sweep) at most once a day, by the time of a marker
// file in it.
func Daily(dir string, now time.Time, maxAge time.Duration, suffix string) error {
	marker := filepath.Join(dir, "swept")
	if fi, err := os.Stat(marker); err == nil && now.Sub(fi.ModTime()) < 24*time.Hour {
		return nil
	}
	if err := Sweep(dir, now, maxAge, suffix); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("sweeping %s: %w", dir, err)
	}
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		return fmt.Errorf("sweeping %s: %w", dir, err)
	}
	return os.Chtimes(marker, now, now)
}

// leftover is how old a temporary file of Replace's is when Sweep takes
// it for one left by a run that stopped.
const leftover = time.Hour

// Sweep removes the files in dir ending in suffix that were last written
// more than maxAge before now, and the temporary files of a Replace
// that stopped midway (an hour old: a Replace takes milliseconds).
func Sweep(dir string, now time.Time, maxAge time.Duration, suffix string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("sweeping %s: %w", dir, err)
	}
	for _, e := range ents {
		age := maxAge
		switch {
		case strings.HasSuffix(e.Name(), ".tmp"):
			age = leftover
		case !strings.HasSuffix(e.Name(), suffix):
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) > age {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return nil
}
