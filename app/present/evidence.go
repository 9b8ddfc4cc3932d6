package present

import (
	"path/filepath"
	"strconv"
	"strings"
)

// EvidenceSays is what an evidence file says, for a person to read. The
// inspector writes values read from files as Go string literals
// (`INSTALLER "pip\n"`), so nothing a file holds can pass for something
// else. Here each literal loses the line end such files end with
// (`INSTALLER "pip"`); anything else unusual in it stays escaped. The
// JSON output keeps the literal as read.
func EvidenceSays(says string) string {
	var out strings.Builder
	for i := 0; i < len(says); {
		if says[i] != '"' {
			out.WriteByte(says[i])
			i++
			continue
		}
		lit, err := strconv.QuotedPrefix(says[i:])
		if err != nil {
			out.WriteByte(says[i])
			i++
			continue
		}
		v, _ := strconv.Unquote(lit) // QuotedPrefix found a valid literal
		v, ok := strings.CutSuffix(v, "\n")
		if ok {
			v = strings.TrimSuffix(v, "\r")
		}
		out.WriteString(strconv.Quote(v))
		i += len(lit)
	}
	return out.String()
}

// EvidenceFile names an evidence file: relative to the environment it
// belongs to when it lies inside it (`lib/python3.12/site-packages/torch/version.py`),
// else as ShortPath does.
func EvidenceFile(file, env string) string {
	if env != "" {
		if rel, err := filepath.Rel(env, file); err == nil && rel != "." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != ".." {
			return rel
		}
	}
	return ShortPath(file)
}
