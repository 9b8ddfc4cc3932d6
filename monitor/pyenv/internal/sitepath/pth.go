package sitepath

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/gpucanary/gpucanary/monitor/pyenv/disk"
)

// Bounds on reading .pth files. Python reads every .pth file of a site,
// whole; a broken or hostile site could hold thousands, or one huge
// file, and an inspection must stay milliseconds.
const (
	MaxFiles   = 64        // .pth files read per site folder, in name order
	MaxLines   = 1000      // lines read per .pth file
	MaxBytes   = 256 << 10 // bytes read per .pth file
	MaxFolders = 256       // folders .pth files add to one environment
)

// Line is one line of a .pth file that Python acts on.
type Line struct {
	File string // the .pth file
	N    int    // line number, from 1
	// Path is a path line made absolute (relative to the site); Code is
	// an import line as written, which Python executes.
	Path, Code string
}

// ReadPth reads the lines of one .pth file as site.addpackage does:
// lines starting with '#' and blank lines are skipped; lines starting
// with "import " or "import\t" are code; any other line, its trailing
// white space removed, is a path, relative to the file's folder unless
// absolute. At most MaxBytes and MaxLines are read; truncated says
// the file holds more. A file that is not a regular file is
// safefs.ErrNotRegular, unopened. The file is read from d, the
// reader's disk.
func ReadPth(d disk.Disk, file string) (lines []Line, truncated bool, err error) {
	f, err := d.Open(file)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", file, err)
	}
	if len(data) > MaxBytes {
		// the last line may be cut: keep whole lines only
		data, truncated = data[:bytes.LastIndexAny(data[:MaxBytes], "\r\n")+1], true
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // utf-8-sig
	site := filepath.Dir(file)
	all := universalLines(string(data))
	if len(all) > MaxLines {
		all, truncated = all[:MaxLines], true
	}
	for i, line := range all {
		switch {
		case strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "":
		case strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "import\t"):
			lines = append(lines, Line{File: file, N: i + 1, Code: line})
		default:
			p := strings.TrimRightFunc(line, unicode.IsSpace)
			if !filepath.IsAbs(p) {
				p = filepath.Join(site, p)
			}
			lines = append(lines, Line{File: file, N: i + 1, Path: filepath.Clean(p)})
		}
	}
	return lines, truncated, nil
}

// universalLines splits text at "\n", "\r\n" and "\r", as Python's text
// files read it.
func universalLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
