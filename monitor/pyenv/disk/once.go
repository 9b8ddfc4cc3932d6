package disk

import (
	"io/fs"
	"sync"
)

// Once is a disk that looks at each path's status once: what Stat and
// Lstat answered (an error included) is answered again, and the rest is
// d's. It is for a one-shot check, a snapshot of the disk, that asks the
// same of the same path more than once: two readers stat an
// environment's libraries, and every environment's project search stats
// the same folders above them up to the root. In this machine's
// measures a stat is 3 to 6 µs, a fifth of a 20-environment check's
// lookups were repeats. Not for a reader that lives on (watch, the tray):
// it would not see the disk change.
type Once struct {
	Disk
	mu    sync.Mutex
	stat  map[string]status
	lstat map[string]status
}

// status is what a Stat or an Lstat answered.
type status struct {
	fi  fs.FileInfo
	err error
}

// NewOnce is d, each path's status looked at once, for a read of about
// envs environments: the answers' maps are sized for them (a read of
// one asks about forty statuses), not grown and rehashed as they fill.
func NewOnce(d Disk, envs int) *Once {
	return &Once{Disk: d, stat: make(map[string]status, min(40*envs, maxKept)), lstat: make(map[string]status, min(8*envs, maxKept))}
}

// maxKept bounds the answers kept of each kind: about 12 environments'
// (a quarter of a MB), so that a check of a thousand, which streams its
// reports to hold a few at a time, does not hold every status it saw:
// at 8192, the 3.5 MB it kept raised such a check's peak from 35 to 55
// MB, its collector letting the heap grow to five times what is live
// (GOGC 400). When full, the answers are let go and kept afresh: a
// path is asked again by the read of its own environment, which is
// among the last few, so the latest answers are the ones worth keeping.
const maxKept = 512

func (o *Once) Stat(path string) (fs.FileInfo, error) {
	return o.once(o.stat, path, o.Disk.Stat)
}

func (o *Once) Lstat(path string) (fs.FileInfo, error) {
	return o.once(o.lstat, path, o.Disk.Lstat)
}

// once is m's answer for path, asked of look the first time. Two readers
// asking at once may both look; the answer kept is the first.
func (o *Once) once(m map[string]status, path string, look func(string) (fs.FileInfo, error)) (fs.FileInfo, error) {
	o.mu.Lock()
	s, ok := m[path]
	o.mu.Unlock()
	if ok {
		return s.fi, s.err
	}
	fi, err := look(path)
	o.mu.Lock()
	if s, ok := m[path]; ok {
		fi, err = s.fi, s.err
	} else {
		if len(m) >= maxKept {
			clear(m)
		}
		m[path] = status{fi, err}
	}
	o.mu.Unlock()
	return fi, err
}
