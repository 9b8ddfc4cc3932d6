package fatbin

import "os"

// stampOf on Windows: os.Stat gives no file index without opening the
// file, so size and modification time (100 ns resolution) stand for it.
func stampOf(fi os.FileInfo) stamp {
	return stamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
}
