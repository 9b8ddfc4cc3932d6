package filefacts

import (
	"io"
	"os"
)

// readFile reads the regular file at path, of at most limit bytes.
func readFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, errMalformed
	}
	return io.ReadAll(io.LimitReader(f, limit))
}
