package procs

import (
	"slices"
	"strings"
)

// A program's own password options (mysql -pX) count only for that
// program, so Redact must know which word of a command line is the
// program: the first word, unless it is a wrapper that runs the program
// named after its own options (sudo -u bob mysql -pX). A wrapper's options
// may take a value of their own, and some wrappers take operands before
// the program (timeout's duration, taskset's mask); reading those values
// as the program (bob, 0-3) hid nothing. So each wrapper's grammar is
// data here.

// wrapper is what a wrapper takes before the program it runs.
type wrapper struct {
	// valued are the options that take a value: the next word, unless it
	// is attached (-ubob, --user=bob). A short one may end a cluster of
	// switches (sudo -Eu bob).
	valued []string
	// operands is how many words follow the options before the program.
	operands int
	// assigns: NAME=value words may stand before the program.
	assigns bool
	// slash: words that start with / are switches (cmd /s /c).
	slash bool
}

// wrappers, by program name. Sources: the man pages of sudo(8), doas(1),
// env(1), nice(1), ionice(1), timeout(1), taskset(1), chrt(1), stdbuf(1),
// GNU time(1), runuser(1), setsid(1), nohup(1), ssh(1), cmd /?, and bash(1) for the
// builtins and the words a shell reads before a command (a -c string is
// redacted as shell text: redact_script.go).
var wrappers = map[string]wrapper{
	"sudo": {valued: []string{"-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir",
		"-h", "--host", "-p", "--prompt", "-R", "--chroot", "-r", "--role", "-t", "--type",
		"-T", "--command-timeout", "-U", "--other-user"}, assigns: true},
	"doas":    {valued: []string{"-u", "-C"}},
	"env":     {valued: []string{"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}, assigns: true},
	"nice":    {valued: []string{"-n", "--adjustment"}},
	"ionice":  {valued: []string{"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"}},
	"timeout": {valued: []string{"-s", "--signal", "-k", "--kill-after"}, operands: 1},
	"taskset": {operands: 1}, // -c (--cpu-list) is a switch: the list is the operand
	"chrt":    {valued: []string{"-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"}, operands: 1},
	"stdbuf":  {valued: []string{"-i", "--input", "-o", "--output", "-e", "--error"}},
	"time":    {valued: []string{"-f", "--format", "-o", "--output"}},
	"runuser": {valued: []string{"-u", "--user", "-g", "--group", "-G", "--supp-group", "-w", "--whitelist-environment"}},
	"nohup":   {}, "setsid": {},
	// ssh runs the words after its destination as a command on the other
	// host: the program is the first of them (ssh(1)).
	"ssh": {valued: []string{"-B", "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o",
		"-P", "-p", "-Q", "-R", "-S", "-W", "-w"}, operands: 1},
	// cmd /c runs the rest of its command line as a command (cmd /?); a
	// quoted whole is shell text, as any argument with spaces.
	"cmd":     {slash: true},
	"exec":    {valued: []string{"-a"}},
	"command": {}, "builtin": {},
	// Shell words that stand before a command in a -c string.
	"if": {}, "then": {}, "else": {}, "elif": {}, "do": {}, "while": {}, "until": {}, "!": {}, "{": {},
}

// programOf returns the program whose options args holds (past any
// wrappers and leading NAME=value assignments) and its index; "" and -1
// when there is none.
func programOf(args []string) (string, int) {
	for i := 0; i < len(args); {
		if isAssignment(args[i]) {
			i++ // a shell's VAR=value before a command
			continue
		}
		name := strings.ToLower(programName(args[i]))
		w, ok := wrappers[name]
		if !ok {
			return name, i
		}
		i = w.skip(args, i+1)
	}
	return "", -1
}

// skip returns the index of the first word from i that is not one of w's
// options, their values, its operands or assignments: the program.
func (w wrapper) skip(args []string, i int) int {
	operands, options := w.operands, true
	for i < len(args) {
		a := args[i]
		switch {
		case options && a == "--":
			options = false
		case options && strings.HasPrefix(a, "-"):
			if w.takesNext(a) {
				i++
			}
		case options && w.slash && strings.HasPrefix(a, "/") && len(a) > 1:
		case w.assigns && isAssignment(a):
		case operands > 0:
			operands--
		default:
			return i
		}
		i++
	}
	return i
}

// takesNext reports whether option a of w takes the next word as its
// value.
func (w wrapper) takesNext(a string) bool { return takesNext(w.valued, a) }

// takesNext reports whether option a takes the next word as its value,
// given the options that take one: a valued long option without =, or a
// cluster of short options (-Eu, +o) that a valued one ends.
func takesNext(valued []string, a string) bool {
	if strings.HasPrefix(a, "--") {
		return !strings.Contains(a, "=") && slices.Contains(valued, a)
	}
	for j := 1; j < len(a); j++ {
		if slices.Contains(valued, a[:1]+a[j:j+1]) {
			return j == len(a)-1 // -ubob: the value is attached
		}
	}
	return false
}

// isAssignment reports whether a is NAME=value, NAME a shell variable
// name.
func isAssignment(a string) bool {
	name, _, ok := strings.Cut(a, "=")
	if !ok || name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// scriptTaker is a program that takes a shell command line in an
// option: that word is redacted as shell text, command by command
// (redactScript), not as one value, so "PGPASSWORD=x psql -h db" shows
// as "PGPASSWORD=*** psql -h db".
type scriptTaker struct {
	// opt is the option: -c.
	opt string
	// long is its long form, if any: --command, --command=….
	long string
	// valued are the program's other options that take the next word.
	valued []string
	// shell: -c is a switch, possibly in a cluster (bash -lc '…'), and the
	// command line is the first operand after the options; an operand
	// before -c is a script file. Otherwise -c takes the next word as its
	// value, and operands may stand anywhere (su - bob -c '…').
	shell bool
}

// shellValued are the options of sh, bash, zsh and ksh that take a value.
var shellValued = []string{"-o", "+o", "-O", "+O", "--rcfile", "--init-file"}

// scriptTakers, by program name (their man pages).
var scriptTakers = map[string]scriptTaker{
	"sh": {opt: "-c", valued: shellValued, shell: true}, "bash": {opt: "-c", valued: shellValued, shell: true},
	"dash": {opt: "-c", valued: shellValued, shell: true}, "zsh": {opt: "-c", valued: shellValued, shell: true},
	"ksh": {opt: "-c", valued: shellValued, shell: true}, "mksh": {opt: "-c", valued: shellValued, shell: true},
	"ash":     {opt: "-c", valued: shellValued, shell: true},
	"fish":    {opt: "-c", long: "--command", valued: []string{"-C", "--init-command", "-d", "--debug", "-o", "--debug-output"}},
	"su":      {opt: "-c", long: "--command", valued: []string{"-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w", "--whitelist-environment"}},
	"runuser": {opt: "-c", long: "--command", valued: []string{"-u", "--user", "-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w", "--whitelist-environment"}},
}

// scriptArg returns the index of the argument that holds a shell command
// line for the program at index at, and where in it that command line
// starts (after --command=); -1 when there is none.
func scriptArg(args []string, prog string, at int) (int, int) {
	t, ok := scriptTakers[prog]
	if !ok {
		return -1, 0
	}
	seen := false
	for i := at + 1; i < len(args); i++ {
		a := args[i]
		isOpt := len(a) > 1 && (a[0] == '-' || a[0] == '+') && a != "--"
		switch {
		case seen && (t.shell && !isOpt || !t.shell):
			return i, 0
		case a == "--":
			if !t.shell {
				return -1, 0 // only operands follow
			}
		case !isOpt:
			if t.shell {
				return -1, 0 // a script file: no -c before it
			}
		case a == t.opt || t.long != "" && a == t.long:
			seen = true
		case t.long != "" && strings.HasPrefix(a, t.long+"="):
			return i, len(t.long) + 1
		case takesNext(t.valued, a):
			i++
		case t.shell && a[0] == '-' && !strings.HasPrefix(a, "--") && strings.Contains(a, t.opt[1:]):
			seen = true // -lc, -ec
		}
	}
	return -1, 0
}
