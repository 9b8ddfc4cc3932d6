package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteAtomic replaces path with data so that a reader sees the old file or
// the new one, never a half-written one. A missing folder is created
// private (0700); an existing one is left as it is. A symbolic link at
// path is written through, as ReplaceFile does.
func WriteAtomic(path string, data []byte, perm fs.FileMode) error {
	target, err := linkTarget(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	return ReplaceFile(path, data, perm)
}

// ReplaceFile replaces the file at path with data, mode perm, in a folder
// that must exist: a temporary file beside it (hidden, ending in .tmp, so
// that a reader of *.prom or *.toml never takes it), synced, then renamed
// over it. When path is a symbolic link (a settings file kept in a
// dotfiles repository, a node_exporter textfile linked into its
// collector's folder), the file it points to is replaced and the link
// stays: renaming over the link itself would turn it into a file of its
// own and leave its target stale. A dangling link's target is created.
func ReplaceFile(path string, data []byte, perm fs.FileMode) error {
	target, err := linkTarget(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", target, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", target, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", target, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", target, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", target, err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("replacing %s: %w", target, err)
	}
	return nil
}

// maxLinks is how many symbolic links linkTarget follows, as Linux's
// MAXSYMLINKS.
const maxLinks = 40

// linkTarget follows path through symbolic links to the name they end
// at, which may not exist yet; path itself when it is no link. Each
// relative target is taken from the folder of its link, as the kernel
// takes it.
func linkTarget(path string) (string, error) {
	p := path
	for range maxLinks {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) || err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		to, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(to) {
			dir := filepath.Dir(p)
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real // a ".." in the target climbs from where the link really is
			}
			to = filepath.Join(dir, to)
		}
		p = to
	}
	return "", fmt.Errorf("more than %d symbolic links", maxLinks)
}
