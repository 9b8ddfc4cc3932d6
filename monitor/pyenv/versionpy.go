package pyenv

import (
	"bytes"
	"errors"
	"strings"
)

// VersionPy is what a generated version.py (torch, torchvision, torchaudio)
// says. It is the most reliable build signal on disk: Linux PyPI wheels keep
// the local tag ("+cu124") only here, not in their dist-info.
type VersionPy struct {
	Version    string // __version__, "2.5.1+cu121"
	CUDA       string // cuda, "12.1"; "" for None
	HIP        string // hip, "6.2.41133"; "" for None
	XPU        string // xpu; "" for None
	GitVersion string
	Debug      bool
}

// ErrNoVersion is returned by ParseVersionPy when a file has no literal
// __version__ assignment.
var ErrNoVersion = errors.New("no __version__ assignment")

// ParseVersionPy reads the literal top-level assignments of a version.py in
// every historical form pytorch's generate_torch_version.py wrote:
// unannotated (`cuda = None`), annotated (`cuda: Optional[str] = '12.1'`),
// either quote style, with comments and an __all__ line. Assignments whose
// value is not a literal (torchvision's `cuda = _check_cuda_version()`) and
// indented lines are ignored.
func ParseVersionPy(data []byte) (VersionPy, error) {
	var v VersionPy
	found := false
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		name, val, ok := parseAssignment(string(bytes.TrimRight(line, "\r")))
		if !ok {
			continue
		}
		switch name {
		case "__version__":
			if s, isStr := stringLiteral(val); isStr && s != "" {
				v.Version, found = s, true
			}
		case "cuda":
			v.CUDA = optionalString(val, v.CUDA)
		case "hip":
			v.HIP = optionalString(val, v.HIP)
		case "xpu":
			v.XPU = optionalString(val, v.XPU)
		case "git_version":
			if s, isStr := stringLiteral(val); isStr {
				v.GitVersion = s
			}
		case "debug":
			switch strings.TrimSpace(val) {
			case "True":
				v.Debug = true
			case "False":
				v.Debug = false
			}
		}
	}
	if !found {
		return v, ErrNoVersion
	}
	return v, nil
}

// parseAssignment splits a top-level `name[: annotation] = value` line.
func parseAssignment(line string) (name, value string, ok bool) {
	if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' {
		return "", "", false
	}
	i := 0
	for i < len(line) && isIdentByte(line[i]) {
		i++
	}
	if i == 0 {
		return "", "", false
	}
	name = line[:i]
	rest := strings.TrimLeft(line[i:], " \t")
	if strings.HasPrefix(rest, ":") {
		eq := strings.IndexByte(rest, '=')
		if eq < 0 {
			return "", "", false
		}
		rest = rest[eq:]
	}
	if !strings.HasPrefix(rest, "=") || strings.HasPrefix(rest, "==") {
		return "", "", false
	}
	return name, strings.TrimSpace(rest[1:]), true
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// stringLiteral returns the content of a leading '...' or "..." literal.
func stringLiteral(val string) (string, bool) {
	if len(val) < 2 || (val[0] != '\'' && val[0] != '"') {
		return "", false
	}
	end := strings.IndexByte(val[1:], val[0])
	if end < 0 {
		return "", false
	}
	return strings.TrimSpace(val[1 : 1+end]), true
}

// optionalString reads an Optional[str] value: a string literal, or None
// (""). Anything else (a call, a name) keeps the previous value.
func optionalString(val, prev string) string {
	if s, ok := stringLiteral(val); ok {
		return s
	}
	if val == "None" || strings.HasPrefix(val, "None ") || strings.HasPrefix(val, "None#") {
		return ""
	}
	return prev
}
