package jobend

import (
	"io"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/safefs"
)

// Log is a regular file a process's stdout or stderr wrote to, as it was
// while the process ran: after the end it is read only if it is still
// that file (not another put at its path since).
type Log struct {
	Path string
	info os.FileInfo
}

// tailBytes is how much of a log's end is read: enough for a Python
// traceback with its chained causes and the lines a logger printed after
// it, little enough to read at once.
const tailBytes = 64 << 10

// logVerdict is what a log's tail says.
type logVerdict struct {
	err   string // what went wrong, "" when nothing did
	quote string // the decisive line
	clean bool   // the log was read, has lines, and none says an error
}

// readLogs reads each log's tail (stdout and stderr are often one file)
// and returns the verdict of the first that says an error, else of the
// first read that was clean, with the path read.
func readLogs(logs []Log) (logVerdict, string) {
	var clean *logVerdict
	cleanPath := ""
	seen := map[string]bool{}
	for _, l := range logs {
		if seen[l.Path] {
			continue
		}
		seen[l.Path] = true
		tail, ok := readTail(l)
		if !ok {
			continue
		}
		v := scanLog(tail)
		if v.err != "" {
			return v, l.Path
		}
		if v.clean && clean == nil {
			clean, cleanPath = &v, l.Path
		}
	}
	if clean != nil {
		return *clean, cleanPath
	}
	return logVerdict{}, ""
}

// readTail reads the last tailBytes of the log, read-only, never
// waiting: only a regular file (safefs), and only the one the process
// wrote to.
func readTail(l Log) ([]byte, bool) {
	f, err := safefs.Open(l.Path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || (l.info != nil && !os.SameFile(fi, l.info)) {
		return nil, false
	}
	off := max(fi.Size()-tailBytes, 0)
	b, err := io.ReadAll(io.LimitReader(io.NewSectionReader(f, off, tailBytes), tailBytes))
	if err != nil {
		return nil, false
	}
	if off > 0 { // the first line is cut: drop it
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return b, true
}

// Compiled at first use, not at each start of the program: a check
// runs none of them, and regexps were a seventh of its start (docs/performance.md).
var (
	// outOfMemory is torch's CUDA OOM, as the exception's name
	// (torch.OutOfMemoryError, torch.cuda.OutOfMemoryError) or its text.
	outOfMemory = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`OutOfMemoryError|CUDA out of memory`) })
	cudaError   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`CUDA error: `) })
	// exceptionLine is the last line of a Python traceback: the
	// exception's (dotted) name, a colon and its message, or the name
	// alone.
	exceptionLine = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit|Warning)?(: |$)`)
	})
	// killedLine is what a shell prints when a job it ran was killed
	// with SIGKILL ("Killed", bash's "line 1: 4242 Killed  python …").
	killedLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Killed$|: line \d+: +\d+ Killed\b`) })
)

// quoteMax bounds a quoted line.
const quoteMax = 300

// scanLog reads a log's tail for how the process ended: CUDA running out
// of memory, a CUDA error, an unhandled Python exception (the last
// traceback's exception line), or a shell's "Killed"; none of them in a
// tail with text in it is a clean end.
func scanLog(tail []byte) logVerdict {
	text := strings.ReplaceAll(string(tail), "\r", "\n") // progress bars redraw with \r
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimRight(l, " \t"))
		}
	}
	if len(lines) == 0 {
		return logVerdict{}
	}
	// The last traceback, and its exception line.
	tb, exc := -1, ""
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(strings.TrimSpace(lines[i]), "Traceback (most recent call last)") {
			tb = i
			break
		}
	}
	if tb >= 0 {
		for _, l := range lines[tb+1:] {
			if l[0] != ' ' && l[0] != '\t' && exceptionLine().MatchString(l) {
				exc = l
				break
			}
		}
	}
	last := func(re *regexp.Regexp) string {
		for i := len(lines) - 1; i >= 0; i-- {
			if re.MatchString(lines[i]) {
				return lines[i]
			}
		}
		return ""
	}
	v := logVerdict{}
	switch {
	case outOfMemory().MatchString(exc):
		v.err, v.quote = "ran out of GPU memory", exc
	case exc == "" && last(outOfMemory()) != "":
		v.err, v.quote = "ran out of GPU memory", last(outOfMemory())
	case cudaError().MatchString(exc):
		v.err, v.quote = "a CUDA error", exc
	case exc == "" && last(cudaError()) != "":
		v.err, v.quote = "a CUDA error", last(cudaError())
	case strings.HasPrefix(exc, "KeyboardInterrupt"):
		v.err, v.quote = "interrupted (Ctrl-C)", exc
	case exc != "":
		v.err, v.quote = "an unhandled Python exception", exc
	case tb >= 0:
		v.err, v.quote = "an unhandled Python exception", lines[len(lines)-1]
	case last(killedLine()) != "":
		v.err, v.quote = "killed (SIGKILL, as its shell reported)", last(killedLine())
	default:
		v.clean = true
	}
	v.quote = quote(v.quote)
	return v
}

// quote is a log line as it may be shown: secrets redacted as command
// lines are, trimmed, and bounded.
func quote(line string) string {
	line = strings.TrimSpace(procs.RedactLine(line))
	if r := []rune(line); len(r) > quoteMax {
		line = string(r[:quoteMax-1]) + "…"
	}
	return line
}
