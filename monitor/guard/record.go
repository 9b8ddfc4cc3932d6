package guard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor/owned"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/uvproject"
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

// sealed is record.json as written: the record's own bytes and their
// SHA-256, so that a record damaged in any byte is caught whole before
// any of it is used, rather than one field at a time.
type sealed struct {
	SHA256 string          `json:"sha256"`
	Record json.RawMessage `json:"record"`
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

	root string // the folder it is opened from (guardFiles)
}

// RecordError is a guard record that was not used: it lies in a folder
// another user could have written, it is damaged, or it names a file
// that is not one of its environment's guard files. A record is what
// unguard removes and restores files by, run as root as often as not, so
// one that fails its checks is never followed; `gpucanary unguard
// --force` lifts the guard by its marks in the files instead.
type RecordError struct {
	Env  string
	Path string // the record, or the folder that failed the owner check
	Why  string
	Err  error // the owner check's *owned.Untrusted, or what failed to read
}

func (e *RecordError) Error() string {
	s := "the guard record " + e.Path + " of " + escape(e.Env) + " is not used: " + e.Why
	if e.Err != nil {
		s += " (" + e.Err.Error() + ")"
	}
	return s + "; `gpucanary unguard --force " + quoteArg(escape(e.Env)) + "` lifts the guard without it"
}

func (e *RecordError) Unwrap() error { return e.Err }

func (k Keeper) recordDir(env string) string {
	sum := sha256.Sum256([]byte(env))
	return filepath.Join(k.StateDir, "guard", hex.EncodeToString(sum[:8]))
}

// guardFiles are the only files a guard of env may write, each with the
// folder it is opened from: the pip config (either name), the
// constraints file and conda-meta/pinned in the environment, and the
// pyproject.toml of the uv project it belongs to. A record naming any
// other path is refused.
func guardFiles(env string) map[string]string {
	m := map[string]string{}
	for _, l := range []pyenv.Layout{pyenv.LayoutPOSIX, pyenv.LayoutWindows} {
		m[PipConfigPath(env, l)] = env
		m[join(l, env, ConstraintsName)] = env
	}
	m[filepath.Join(env, "conda-meta", "pinned")] = env
	if proj, ok := uvproject.FindProject(env); ok {
		m[proj.Pyproject] = filepath.Dir(proj.Pyproject)
	}
	return m
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

// trustDirs checks the state folder, its guard folder and the record's
// folder (each must be the user's own and not writable by others, and
// so must every folder above them be, owned.Check): a record or a saved
// copy in a folder another user can write could have been planted.
func (k Keeper) trustDirs(env, dir string) error {
	for _, d := range []string{k.StateDir, filepath.Join(k.StateDir, "guard"), dir} {
		if err := owned.Check(d, owned.Policy{}); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return err
			}
			return &RecordError{Env: env, Path: d, Why: "its folder is not one only you can write", Err: err}
		}
	}
	return nil
}

// load reads env's record; no record wraps ErrNotGuarded, and one that
// fails a check is a *RecordError.
func (k Keeper) load(env string) (*record, error) {
	if abs, err := filepath.Abs(env); err == nil {
		env = abs
	}
	if k.StateDir == "" {
		return nil, fmt.Errorf("%s: %w (no state folder)", env, ErrNotGuarded)
	}
	dir := k.recordDir(env)
	path := filepath.Join(dir, "record.json")
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is %w by GPU Canary", escape(env), ErrNotGuarded)
	}
	if err := k.trustDirs(env, dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s is %w by GPU Canary", escape(env), ErrNotGuarded)
		}
		return nil, err
	}
	bad := func(why string, err error) (*record, error) {
		return nil, &RecordError{Env: env, Path: path, Why: why, Err: err}
	}
	if err := owned.Check(path, owned.Policy{}); err != nil {
		return bad("it is not a file only you can write", err)
	}
	b, _, err := readFile(dir, path, maxFile)
	if err != nil {
		return bad("it cannot be read", err)
	}
	var s sealed
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil || s.SHA256 == "" || len(s.Record) == 0 {
		return bad("it is malformed (not a record this version of GPU Canary writes)", err)
	}
	if hash(s.Record) != s.SHA256 {
		return bad("it is damaged (its checksum does not match)", nil)
	}
	var r record
	if err := json.Unmarshal(s.Record, &r); err != nil {
		return bad("it is malformed", err)
	}
	if r.Env != env {
		return bad("it is the record of another environment ("+escape(r.Env)+")", nil)
	}
	allowed := guardFiles(env)
	for i, f := range r.Files {
		root, ok := allowed[f.Path]
		if !ok {
			return bad(escape(f.Path)+" is not one of the environment's guard files", nil)
		}
		if f.Saved != "" && (filepath.Dir(f.Saved) != dir || !strings.HasPrefix(filepath.Base(f.Saved), "original-")) {
			return bad("its saved copy "+escape(f.Saved)+" is not in its own folder", nil)
		}
		if f.Created == (f.Saved != "") {
			return bad(escape(f.Path)+" is both created and saved, or neither", nil)
		}
		r.Files[i].root = root
	}
	r.dir = dir
	return &r, nil
}

// changed names the files that no longer are as the guard left them.
func (r *record) changed() []string {
	var out []string
	for _, f := range r.Files {
		b, _, err := readFile(f.root, f.Path, maxFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, escape(f.Path)+" removed")
		case err != nil:
			out = append(out, escape(f.Path)+" unreadable ("+err.Error()+")")
		case hash(b) != f.Wrote:
			out = append(out, escape(f.Path)+" edited")
		}
	}
	return out
}

func hash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// apply carries out the edits, saving each original first; if one fails,
// those done are undone. The record's folder is made private and checked
// before anything is written, so a guard is never recorded where another
// user could change its record.
func (k Keeper) apply(env string, eds []edit, pins []string) (Result, error) {
	r := &record{Env: env, Set: time.Now().UTC(), dir: k.recordDir(env)}
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		return Result{}, fmt.Errorf("setting a guard on %s: creating %s: %w", escape(env), r.dir, err)
	}
	if err := k.trustDirs(env, r.dir); err != nil {
		return Result{}, fmt.Errorf("setting a guard on %s: %w", escape(env), err)
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
		old, info, err := readFile(ed.root, ed.path, maxFile)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(err)
		}
		mode := fs.FileMode(0o644)
		if info != nil {
			mode = info.mode
		}
		out, err := ed.make(old)
		if err != nil {
			return fail(err)
		}
		f := file{Path: ed.path, Created: !exists, Mode: mode, Wrote: hash(out), root: ed.root}
		if exists {
			f.Saved = filepath.Join(r.dir, fmt.Sprintf("original-%d-%s", i, filepath.Base(ed.path)))
			if err := writeFile(r.dir, f.Saved, old, 0o600); err != nil {
				return fail(fmt.Errorf("saving a copy of %s: %w", ed.path, err))
			}
		}
		if err := writeFile(ed.root, ed.path, out, mode); err != nil {
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

func (k Keeper) save(r *record) error {
	inner, err := json.Marshal(r)
	if err != nil {
		return err
	}
	// Not indented: MarshalIndent would indent the record's own bytes
	// too, and they are what the checksum is of.
	b, err := json.Marshal(sealed{SHA256: hash(inner), Record: inner})
	if err != nil {
		return err
	}
	if err := writeFile(r.dir, filepath.Join(r.dir, "record.json"), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("recording the guard of %s: %w", escape(r.Env), err)
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
			if err := removeFile(f.root, f.Path); err != nil {
				return res, fmt.Errorf("removing %s: %w", f.Path, err)
			}
			res.Lines = append(res.Lines, "removed "+escape(f.Path))
			continue
		}
		old, _, err := readFile(r.dir, f.Saved, maxFile)
		if err != nil {
			return res, fmt.Errorf("reading the saved copy of %s: %w", f.Path, err)
		}
		if err := writeFile(f.root, f.Path, old, f.Mode); err != nil {
			return res, err
		}
		res.Lines = append(res.Lines, "restored "+escape(f.Path))
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
