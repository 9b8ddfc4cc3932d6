package procs

import (
	"regexp"
	"strings"
)

// secretKey matches option and variable names that hold secrets.
var secretKey = regexp.MustCompile(`(?i)(token|secret|passw(or)?d|api[_-]?key|authorization|credential|private[_-]?key|access[_-]?key)`)

// urlCreds matches user:password@ in a URL anywhere in an argument.
var urlCreds = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*):[^/\s@]*@`)

// Redact hides secrets in a command line before it is shown or written:
// values of --token=X / --token X / HF_TOKEN=X / api_key=X, secret headers
// ("Authorization: ***"), and passwords in URLs (https://user:***@host).
// The argument count is kept; a boolean flag named like a secret hides the
// argument after it, which errs on the safe side.
func Redact(args []string) []string {
	out := make([]string, len(args))
	hideNext := false
	for i, a := range args {
		switch {
		case hideNext:
			out[i] = "***"
			hideNext = false
			continue
		case strings.HasPrefix(a, "-") && !strings.Contains(a, "="):
			if secretKey.MatchString(a) {
				hideNext = true
			}
			out[i] = a
			continue
		}
		if k, v, ok := strings.Cut(a, "="); ok && secretKey.MatchString(k) && v != "" {
			out[i] = k + "=***"
			continue
		}
		// A header: "Authorization: Bearer X", "X-Api-Key: X".
		if k, v, ok := strings.Cut(a, ": "); ok && secretKey.MatchString(k) && !strings.ContainsAny(k, " /") && v != "" {
			out[i] = k + ": ***"
			continue
		}
		out[i] = urlCreds.ReplaceAllString(a, "$1:***@")
	}
	return out
}
