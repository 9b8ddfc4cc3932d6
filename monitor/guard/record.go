package guard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// maxFile bounds what the guard reads of a config file: pip configs,
// pinned files and pyproject.toml files are a few KB.
const maxFile = 4 << 20

// record is what a guard changed, kept in the state folder as
// guard/<hash of the env path>/record.json beside the saved copies.
type record struct {
	Env   string    `json:"env"`
	Set   time.Time `json:"set"`
	Pins  []string  `json:"pins"`
	Files []file    `json:"files"`

	dir string // the record's folder
}

// file is one file the guard wrote.
type file struct {
	Path string `json:"path"`
	// Created is true when the file did not exist: unguard removes it.
	Created bool `json:"created,omitempty"`
	// Saved is the copy of the original (in the record's folder) that
	// unguard restores, with the original's mode.
	Saved string      `json:"saved,omitempty"`
	Mode  fs.FileMode `json:"mode,omitempty"`
	// Wrote is the SHA-256 of what the guard left there: a file that no
	// longer hashes to it was changed by hand.
	Wrote string `json:"wrote"`
}

func (k Keeper) recordDir(env string) string {
	sum := sha256.Sum256([]byte(env))
	return filepath.Join(k.StateDir, "guard", hex.EncodeToString(sum[:8]))
}

// Any reports whether an environment may have a guard record (the
// records' folder exists, or cannot be looked at): a check of many
// environments asks once, and reads no record of each when none can be.
func (k Keeper) Any() bool {
	if k.StateDir == "" {
		return false
	}
	_, err := os.Lstat(filepath.Join(k.StateDir, "guard"))
	return !errors.Is(err, fs.ErrNotExist)
}

// load reads env's record; no record wraps ErrNotGuarded.
func (k Keeper) load(env string) (*record, error) {
	if abs, err := filepath.Abs(env); err == nil {
		env = abs
	}
	if k.StateDir == "" {
		return nil, fmt.Errorf("%s: %w (no state folder)", env, ErrNotGuarded)
	}
	dir := k.recordDir(env)
	b, err := safefs.ReadFile(filepath.Join(dir, "record.json"), maxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is %w by GPU Canary", env, ErrNotGuarded)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the guard record of %s: %w", env, err)
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil || r.Env != env {
		return nil, fmt.Errorf("the guard record %s is malformed (%v)", filepath.Join(dir, "record.json"), err)
	}
	r.dir = dir
	return &r, nil
}

// changed names the files that no longer are as the guard left them.
func (r *record) changed() []string {
	var out []string
	for _, f := range r.Files {
		b, err := safefs.ReadFile(f.Path, maxFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, f.Path+" removed")
		case err != nil:
			out = append(out, f.Path+" unreadable")
		case hash(b) != f.Wrote:
			out = append(out, f.Path+" edited")
		}
	}
	return out
}

func hash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// apply carries out the edits, saving each original first; if one fails,
// those done are undone.
func (k Keeper) apply(env string, eds []edit, pins []string) (Result, error) {
	r := &record{Env: env, Set: time.Now().UTC(), dir: k.recordDir(env)}
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		return Result{}, fmt.Errorf("setting a guard on %s: %w", env, err)
	}
	res := Result{Env: env}
	fail := func(err error) (Result, error) {
		if _, uerr := k.undo(r, true); uerr != nil {
			err = fmt.Errorf("%w (and undoing what was done: %v)", err, uerr)
		}
		r.remove()
		return Result{}, err
	}
	for i, ed := range eds {
		old, err := safefs.ReadFile(ed.path, maxFile)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(fmt.Errorf("reading %s: %w", ed.path, err))
		}
		mode := fs.FileMode(0o644)
		if fi, err := os.Stat(ed.path); err == nil {
			mode = fi.Mode().Perm()
		}
		out, err := ed.make(old)
		if err != nil {
			return fail(err)
		}
		f := file{Path: ed.path, Created: !exists, Mode: mode, Wrote: hash(out)}
		if exists {
			f.Saved = filepath.Join(r.dir, fmt.Sprintf("original-%d-%s", i, filepath.Base(ed.path)))
			if err := os.WriteFile(f.Saved, old, 0o600); err != nil {
				return fail(fmt.Errorf("saving a copy of %s: %w", ed.path, err))
			}
		}
		if !exists {
			err = writeNew(ed.path, out, mode)
		} else {
			err = config.ReplaceFile(ed.path, out, mode)
		}
		if err != nil {
			return fail(err)
		}
		r.Files = append(r.Files, f)
		res.Lines = append(res.Lines, ed.says)
	}
	r.Pins = pins
	if err := k.save(r); err != nil {
		return fail(err)
	}
	res.Pins = r.Pins
	return res, nil
}

// writeNew creates path, never over a file that appeared meanwhile.
func writeNew(path string, data []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, werr)
	}
	return nil
}

func (k Keeper) save(r *record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := config.WriteAtomic(filepath.Join(r.dir, "record.json"), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("recording the guard of %s: %w", r.Env, err)
	}
	return nil
}

// undo puts back each file of r, last first, and removes the record.
func (k Keeper) undo(r *record, force bool) (Result, error) {
	if ch := r.changed(); len(ch) > 0 && !force {
		e := &ChangedError{Env: r.Env, Files: ch, Saved: map[string]string{}}
		for _, f := range r.Files {
			if f.Saved != "" {
				e.Saved[f.Path] = f.Saved
			}
		}
		return Result{}, e
	}
	res := Result{Env: r.Env, Pins: r.Pins}
	for _, f := range slices.Backward(r.Files) {
		if f.Created {
			if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return res, fmt.Errorf("removing %s: %w", f.Path, err)
			}
			res.Lines = append(res.Lines, "removed "+f.Path)
			continue
		}
		old, err := os.ReadFile(f.Saved)
		if err != nil {
			return res, fmt.Errorf("reading the saved copy of %s: %w", f.Path, err)
		}
		if err := restore(f.Path, old, f.Mode); err != nil {
			return res, err
		}
		res.Lines = append(res.Lines, "restored "+f.Path)
	}
	if err := r.remove(); err != nil {
		return res, fmt.Errorf("removing the guard record %s: %w", r.dir, err)
	}
	return res, nil
}

// remove deletes the record: its saved copies, record.json, its folder.
// File by file, not os.RemoveAll, whose Windows form wine 8 does not
// implement (scripts/test-windows.sh).
func (r *record) remove() error {
	var names []string
	for _, f := range r.Files {
		if f.Saved != "" {
			names = append(names, f.Saved)
		}
	}
	for _, n := range append(names, filepath.Join(r.dir, "record.json"), r.dir) {
		if err := os.Remove(n); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// restore writes a saved original back, creating it if the user removed it.
func restore(path string, data []byte, mode fs.FileMode) error {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return writeNew(path, data, mode)
	}
	return config.ReplaceFile(path, data, mode)
}
