package managers

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Resolution is what a path a person typed stands for: an environment, a
// project folder resolved to the environment its manager uses for it, or
// an interpreter resolved to its environment.
type Resolution struct {
	// Arg is the path as given.
	Arg string `json:"arg"`
	// Env is the environment, absolute; "" when the project has none yet.
	Env string `json:"env,omitempty"`
	// Project is the project folder, when Arg was one (or a file in one).
	Project string `json:"project,omitempty"`
	// Manager is the Name of the manager whose rule chose Env.
	Manager string `json:"manager,omitempty"`
	// Rule says how, in words: "uv project", "Poetry project:
	// virtualenvs.path, named from the project's name and folder".
	Rule string `json:"rule,omitempty"`
	// Create, when Env is "", says how to create the project's
	// environment ("uv sync").
	Create string `json:"create,omitempty"`
}

// Line says what the path resolved to, for output: "./ → ./.venv (uv
// project)"; "" when Arg was the environment itself.
func (r Resolution) Line() string {
	if r.Rule == "" {
		return ""
	}
	base := r.Project
	if base == "" {
		base = r.Env
	}
	show := func(p string) string {
		if p == "" {
			return ""
		}
		if rel, err := filepath.Rel(base, p); err == nil && r.Project != "" && !strings.HasPrefix(rel, "..") {
			if rel == "." {
				return "." + string(filepath.Separator)
			}
			return "." + string(filepath.Separator) + rel
		}
		return p
	}
	arg := r.Arg
	if r.Project != "" && sameDir(r.Arg, r.Project) {
		arg = show(r.Project)
	}
	if r.Env == "" {
		return fmt.Sprintf("%s → no environment yet (%s)", arg, r.Rule)
	}
	return fmt.Sprintf("%s → %s (%s)", arg, show(r.Env), r.Rule)
}

// NotCreated is the one sentence, for every view, that a project folder
// has no environment yet and how to make it: "SUBJECT (uv project) has no
// environment yet: create it with `uv sync` in that folder". subject
// names the folder as the caller shows it (the path, "the project
// folder"); a caller adds what to do after ("then check again").
func (r Resolution) NotCreated(subject string) string {
	return NotCreatedSentence(subject, r.Rule, r.Create)
}

// NotCreatedSentence is NotCreated from its parts, for a caller that holds
// them and no Resolution (a finding made from envsearch.Found); rule may be "".
func NotCreatedSentence(subject, rule, create string) string {
	if rule != "" {
		subject += " (" + rule + ")"
	}
	return fmt.Sprintf("%s has no environment yet: create it with `%s` in that folder", subject, create)
}
