package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/jobend"
)

// exitInterrupted is wait's status when Ctrl-C (or SIGTERM, SIGHUP)
// ended it before the processes did: 128 + SIGINT, as a shell says it,
// so that `gpucanary wait PID && next` does not go on.
const exitInterrupted = 130

// waitPoll is how often wait asks whether the processes ended: one read
// of /proc/PID/stat each (jobend's doc comment says why it polls).
const waitPoll = 250 * time.Millisecond

func waitFlags(fs *flag.FlagSet, g *globals) runFunc {
	asJSON := fs.Bool("json", false, "print one JSON object a line, one per PID as it ends")
	g.simFlag(fs)
	return func(ctx context.Context, std stdio) int { return cmdWait(ctx, g, fs.Args(), *asJSON, std) }
}

// waited is one process wait holds, and what was seen of it on the GPU.
type waited struct {
	held    *jobend.Held
	memFrac float64
	peak    *uint64
	utilSum float64
	utilN   int
	done    bool
}

// cmdWait blocks until every process named ends and says how each did
// (jobend.Explain, as JOB_ENDED says it); 0 when every one is known to
// have finished, 1 when any crashed or ended in a way nothing tells, 2
// when an argument names no process, 130 when interrupted.
func cmdWait(ctx context.Context, g *globals, args []string, asJSON bool, std stdio) int {
	var ws []*waited
	defer func() {
		for _, w := range ws {
			w.held.Close()
		}
	}()
	var pids []int
	for _, a := range args {
		pid, err := strconv.Atoi(a)
		if err != nil || pid <= 0 {
			fmt.Fprintf(std.err, "gpucanary wait: %q is not a PID (a positive number)\n", a)
			return exitUsage
		}
		if !slices.Contains(pids, pid) {
			pids = append(pids, pid)
		}
	}
	for _, pid := range pids {
		h, err := jobend.Open("", pid, time.Time{})
		if errors.Is(err, jobend.ErrNoProcess) {
			fmt.Fprintf(std.err, "gpucanary wait: no process has PID %d\n", pid)
			return exitUsage
		}
		if err != nil {
			fmt.Fprintf(std.err, "gpucanary wait: %v\n", err)
			return exitUsage
		}
		ws = append(ws, &waited{held: h})
	}
	who := make([]string, len(ws))
	for i, w := range ws {
		who[i] = fmt.Sprintf("PID %d", w.held.PID)
		if c := human.CommandLine(w.held.Cmdline, "", ""); c != "" {
			who[i] += " (" + c + ")"
		}
	}
	fmt.Fprintf(std.err, "gpucanary: waiting for %s to end; Ctrl-C stops.\n", human.Visible(strings.Join(who, ", ")))
	b := g.openGPU()
	defer b.Close()
	oom, oomOK := jobend.OOMKills("")
	tick := time.NewTicker(waitPoll)
	defer tick.Stop()
	code, left := exitOK, len(ws)
	for polls := 0; ; polls++ {
		if polls%4 == 0 { // the GPU once a second: how full it is, what each holds
			observeGPU(b.Snapshot(ctx), ws)
		}
		now := time.Now()
		oomNow, oomNowOK := jobend.OOMKills("")
		for _, w := range ws {
			if w.done {
				continue
			}
			ended, st := w.held.Poll()
			if !ended {
				continue
			}
			w.done, left = true, left-1
			end := jobend.Explain(jobend.Evidence{Status: st, OOMKilled: oomOK && oomNowOK && oomNow > oom,
				Logs: w.held.Logs, MemFraction: w.memFrac})
			if end.How != jobend.Finished {
				code = exitFound
			}
			if err := sayEnd(std, asJSON, w, end, now); err != nil {
				fmt.Fprintf(std.err, "gpucanary wait: writing: %v\n", err)
				return exitUsage
			}
		}
		oom, oomOK = oomNow, oomNowOK
		if left == 0 {
			return code
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(std.err, "gpucanary wait: interrupted; %d of %d still running\n", left, len(ws))
			return exitInterrupted
		case <-tick.C:
		}
	}
}

// observeGPU notes, for each process, how full the GPUs it holds memory
// on are and what it holds and uses there.
func observeGPU(g gpu.State, ws []*waited) {
	for _, w := range ws {
		if w.done {
			continue
		}
		var held uint64
		var seen, util bool
		var sm float64
		w.memFrac = 0
		for _, d := range g.Devices {
			for _, p := range d.Processes {
				if p.PID != w.held.PID {
					continue
				}
				seen = true
				if d.MemoryTotalBytes > 0 {
					w.memFrac = max(w.memFrac, float64(d.MemoryUsedBytes)/float64(d.MemoryTotalBytes))
				}
				if p.UsedMemoryBytes != nil {
					held += *p.UsedMemoryBytes
				}
				switch {
				case p.SMPercent != nil:
					sm, util = max(sm, float64(*p.SMPercent)), true
				case d.UtilizationGPU != nil:
					sm, util = max(sm, float64(*d.UtilizationGPU)), true
				}
			}
		}
		if seen && (w.peak == nil || held > *w.peak) {
			w.peak = &held
		}
		if util {
			w.utilSum += sm
			w.utilN++
		}
	}
}

// sayEnd prints how one process ended: a sentence, or with asJSON one
// object (the shape of a JOB_ENDED event's job).
func sayEnd(std stdio, asJSON bool, w *waited, end jobend.End, now time.Time) error {
	ran := jobend.RunTime(w.held.Start, now)
	if !asJSON {
		_, err := fmt.Fprintln(std.out, human.Visible(jobend.Say(human.CommandLine(w.held.Cmdline, "", ""), w.held.PID, ran, end)))
		return err
	}
	je := monitor.JobEnd{End: end, PID: w.held.PID, Command: w.held.Cmdline, Started: w.held.Start, RunSeconds: ran.Seconds(),
		PeakGPUMemoryBytes: w.peak}
	if w.utilN > 0 {
		mean := w.utilSum / float64(w.utilN)
		je.MeanGPUPercent = &mean
	}
	return json.NewEncoder(std.out).Encode(je)
}
