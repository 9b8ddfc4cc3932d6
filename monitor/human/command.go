package human

import (
	"path/filepath"
	"strings"
)

// argPathMax is the longest a path among a command's arguments is shown
// before it is shortened from the left.
const argPathMax = 32

// CommandLine is a command line as a person scans it: the program by its
// name ("python", not "~/work/proj/.venv/bin/python": where it runs from
// is said apart), then its arguments, a long path among them shortened
// from the left to its last folders ("…/vision/scripts/train.py"), so
// that the script and its arguments are what a narrow column or a
// notification shows; home (when not "") written as ~. With no command
// line it is name. The one wording of a command for ps, the windows and
// the engine's messages (JOB_ENDED).
func CommandLine(cmdline []string, name, home string) string {
	var args []string
	for _, a := range cmdline {
		if a = strings.Join(strings.Fields(a), " "); a != "" {
			args = append(args, a)
		}
	}
	if len(args) == 0 {
		return name
	}
	out := make([]string, len(args))
	out[0] = args[0][strings.LastIndexAny(args[0], `/\`)+1:] // a Windows path's too, on any system
	if out[0] == "" {
		out[0] = args[0]
	}
	for i, a := range args[1:] {
		out[i+1] = shortArg(TildeIn(home, a))
	}
	return strings.Join(out, " ")
}

// TildeIn writes every mention of the folder home (followed by a
// separator) in s, a command line or a message, as ~.
func TildeIn(home, s string) string {
	if home == "" || home == "/" {
		return s
	}
	return strings.ReplaceAll(s, home+string(filepath.Separator), "~"+string(filepath.Separator))
}

// shortArg shortens a path argument longer than argPathMax from the left
// at a separator: "…/vision/scripts/train.py". Other arguments, and an
// option's value (--data=/very/long/path), are left as they are.
func shortArg(a string) string {
	if len(a) <= argPathMax || strings.HasPrefix(a, "-") || !strings.ContainsAny(a, `/\`) {
		return a
	}
	cut := len(a) - argPathMax
	for i := cut; i < len(a); i++ {
		if a[i] == '/' || a[i] == '\\' {
			return "…" + a[i:]
		}
	}
	return "…" + a[cut:]
}

// JobName is what names a job in a short line (the tray's tooltip, a
// chart's mark): its Python script's file name ("train.py"), the module
// it runs (`python -m torch.distributed.run` is "torch.distributed.run"),
// else its program's name; "" with no command line.
func JobName(cmdline []string) string {
	base := func(s string) string { return s[strings.LastIndexAny(s, `/\`)+1:] }
	for i := 1; i < len(cmdline); i++ {
		a := cmdline[i]
		if a == "-m" && i+1 < len(cmdline) {
			return cmdline[i+1]
		}
		if strings.HasSuffix(strings.ToLower(a), ".py") && !strings.HasPrefix(a, "-") {
			return base(a)
		}
	}
	if len(cmdline) == 0 {
		return ""
	}
	if b := base(cmdline[0]); b != "" {
		return b
	}
	return cmdline[0]
}
