// Package owned says whether a folder or file that GPU Canary reads back
// (a cache, a state record, a guard record, a knowledge overlay) could
// have been written by another local user, as OpenSSH asks of ~/.ssh and
// sudo of sudoers: what another user could have written is never
// believed. A path is trusted when it is owned by the user running GPU
// Canary (or by the administrator, where the caller allows it) and no
// one else can write it, and when every folder above it is one that no
// other user can rename it out of (owned by the user or the
// administrator, and not writable by others unless sticky, as /tmp is).
//
// The check itself is per platform (mode bits and owners on Unix; the
// owner's SID and the DACL's write grants on Windows); its answer is
// one error type that says what was found and what to do.
package owned

import (
	"fmt"
	"path/filepath"
)

// Policy says who besides the user may own a trusted path.
type Policy struct {
	// Admin allows the administrator as owner (root on Unix;
	// Administrators or SYSTEM on Windows): system-wide folders such as
	// /etc/gpucanary/kb.d or %ProgramData% are the administrator's.
	Admin bool
}

// Untrusted is why a path is not believed: whose it is, its mode (Unix)
// and what about them is wrong.
type Untrusted struct {
	Path  string // the path that failed the check: the one asked about or a folder above it
	Owner string // its owner as the system names it (a user name, or a UID or SID when it has none)
	Mode  string // its permissions as ls shows them (Unix); "" on Windows
	Why   string // what is wrong, in words
}

func (e *Untrusted) Error() string {
	s := fmt.Sprintf("%s is not trusted: %s (owner %s", e.Path, e.Why, e.Owner)
	if e.Mode != "" {
		s += ", mode " + e.Mode
	}
	return s + ")"
}

// Check returns nil when path is trusted under p, else an *Untrusted
// naming the first thing wrong, or the error met looking (a path that is
// not there is fs.ErrNotExist, wrapped). A link at path's end is not
// followed: a link is never a trusted store.
func Check(path string, p Policy) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("checking who owns %s: %w", path, err)
	}
	if err := checkLeaf(abs, p); err != nil {
		return err
	}
	return CanMakeIn(filepath.Dir(abs))
}

// CanMakeIn returns nil when a path made now in the folder dir would be
// trusted as far as the folders above it go: dir and every folder above
// it are ones no other user can replace what is in them from (what
// Check asks of a path's folders). A sticky folder writable by all, as
// /tmp, is one: what the user makes there stays the user's.
func CanMakeIn(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("checking who owns %s: %w", dir, err)
	}
	for d := abs; ; d = filepath.Dir(d) {
		if err := checkParent(d); err != nil {
			return err
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}
