package main

import (
	"fmt"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/output/jsonout"
	"github.com/gpucanary/gpucanary/output/text"
)

// checkOutput is one of check's outputs (text, JSON, metrics), handed the
// check as it goes: begin with the GPU, each environment's report in
// order, end with the whole result's GPU findings and completeness.
type checkOutput interface {
	begin(std stdio, res monitor.CheckResult)
	// prepare makes a report ready to be written; it runs on the worker
	// that read it, several at once.
	prepare(rep monitor.EnvReport) checkedEnv
	// env writes (or keeps) one report prepare made ready.
	env(e checkedEnv) error
	end(res monitor.CheckResult, began time.Time) error
}

// checkedEnv is one environment's report as an output needs it, with
// its verdict for the exit status.
type checkedEnv struct {
	verdict monitor.Verdict
	rep     monitor.EnvReport  // the report, for an output that writes the whole result at the end
	json    jsonout.EncodedEnv // the report encoded, for the JSON output
	err     error              // why it could not be encoded
}

// wholeOutput is an output of the whole result at its end (text,
// metrics): it keeps the reports in order until then.
type wholeOutput struct {
	std   stdio
	envs  []monitor.EnvReport
	write func(res monitor.CheckResult, began time.Time, std stdio) error
}

func (w *wholeOutput) begin(std stdio, _ monitor.CheckResult) { w.std = std }

func (w *wholeOutput) prepare(rep monitor.EnvReport) checkedEnv {
	return checkedEnv{verdict: rep.Verdict, rep: rep}
}

func (w *wholeOutput) env(e checkedEnv) error {
	w.envs = append(w.envs, e.rep)
	return nil
}

func (w *wholeOutput) end(res monitor.CheckResult, began time.Time) error {
	res.Envs = w.envs
	return w.write(res, began, w.std)
}

// textOutput is check's text, home shortened as getenv says.
func textOutput(getenv func(string) string) *wholeOutput {
	return &wholeOutput{write: func(res monitor.CheckResult, _ time.Time, std stdio) error {
		text.New(std.out, getenv).Check(res)
		return nil
	}}
}

// metricsOutput is check's metrics (--format prom), on stdout or into
// textfile.
func metricsOutput(textfile string) *wholeOutput {
	return &wholeOutput{write: func(res monitor.CheckResult, began time.Time, std stdio) error {
		return checkMetrics(res, res.Complete, began, textfile, std)
	}}
}

// jsonOutput is `check --json`, written as the environments are read:
// each report is encoded by the worker that read it and written as soon
// as those before it are, then let go.
type jsonOutput struct{ w *jsonout.CheckWriter }

func newJSONOutput() *jsonOutput { return &jsonOutput{} }

func (j *jsonOutput) begin(std stdio, res monitor.CheckResult) {
	j.w = jsonout.NewCheckWriter(std.out)
	j.w.Begin(res)
}

func (j *jsonOutput) prepare(rep monitor.EnvReport) checkedEnv {
	data, err := jsonout.EncodeEnv(rep)
	return checkedEnv{verdict: rep.Verdict, json: data, err: err}
}

func (j *jsonOutput) env(e checkedEnv) error {
	if e.err != nil {
		return fmt.Errorf("writing JSON: %w", e.err)
	}
	j.w.WriteEnv(e.json)
	return nil
}

func (j *jsonOutput) end(res monitor.CheckResult, _ time.Time) error {
	if err := j.w.End(res); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}
