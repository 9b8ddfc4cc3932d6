package pyenv

import "strings"

// ParsePyvenvCfg reads a pyvenv.cfg as venv, virtualenv and uv write it:
// `key = value` lines. Keys are lowercased and trimmed, values trimmed; lines
// without '=' and comments are skipped; the first occurrence of a key wins,
// as in CPython's site.py.
func ParsePyvenvCfg(data []byte) map[string]string {
	out := make(map[string]string)
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		if k == "" {
			continue
		}
		if _, dup := out[k]; !dup {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// pythonFromCfg returns major.minor from pyvenv.cfg's version (venv) or
// version_info (virtualenv "3.11.7.final.0", uv "3.11.7").
func pythonFromCfg(cfg map[string]string) (string, string) {
	for _, k := range []string{"version", "version_info"} {
		if mm := majorMinor(cfg[k]); mm != "" {
			return mm, k + " = " + cfg[k]
		}
	}
	return "", ""
}

// majorMinor returns "X.Y" from "X.Y[.Z...]" when X and Y are numbers.
func majorMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 || !isDigits(parts[0]) {
		return ""
	}
	minor := parts[1]
	n := 0
	for n < len(minor) && minor[n] >= '0' && minor[n] <= '9' {
		n++
	}
	if n == 0 {
		return ""
	}
	return parts[0] + "." + minor[:n]
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
