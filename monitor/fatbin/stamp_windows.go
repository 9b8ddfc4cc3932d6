package fatbin

import (
	"fmt"
	"io"
	"os"
)

// openLib opens the library at path, stat'ed as fi, and checks that what
// was opened is the regular file that was stat'ed.
func openLib(path string, fi os.FileInfo) (io.ReaderAt, int64, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, nil, err
	}
	ofi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, nil, err
	}
	if !ofi.Mode().IsRegular() || !os.SameFile(fi, ofi) {
		f.Close()
		return nil, 0, nil, fmt.Errorf("%s changed while it was opened", path)
	}
	return f, ofi.Size(), func() { f.Close() }, nil
}
