// Package chart draws the windows' time charts and sparklines with Fyne's
// canvas primitives (lines, rectangles, text), so they scale with the
// display like the rest of the window. The arithmetic a chart needs (nice
// axis ticks, time ticks, units, fitting many samples into few pixels) is
// pure and tested without a display; the widgets only place what it
// computes.
package chart

import (
	"math"
	"strconv"
	"time"
)

// Point is one sample: a value at a time. A negative value means the
// driver did not say (an asleep GPU, a field not supported): the line
// breaks there rather than drop to zero.
type Point struct {
	T time.Time
	V float64
}

// Known reports whether p holds a value.
func (p Point) Known() bool { return p.V >= 0 }

// Ticks are the values where a value axis gets a grid line and a label:
// round steps (1, 2 or 5 times a power of ten) from lo to hi inclusive,
// at most about n of them. hi <= lo gives lo alone.
func Ticks(lo, hi float64, n int) []float64 {
	if !(hi > lo) || n < 1 {
		return []float64{lo}
	}
	step := niceStep((hi - lo) / float64(n))
	var out []float64
	first := math.Ceil(lo/step-1e-9) * step
	for v := first; v <= hi+step*1e-9; v += step {
		out = append(out, round(math.Round(v/step)*step))
	}
	return out
}

// round drops the float noise of a multiple (0.30000000000000004) and
// the sign of a zero.
func round(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return r + 0
}

// niceStep is the round step (1, 2, 2.5 or 5 times a power of ten) not
// below raw.
func niceStep(raw float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// NiceMax rounds v up to a round axis top (1, 2, 2.5 or 5 times a power
// of ten, or a multiple of such a step), so an axis ends on a labelled
// grid line. v <= 0 gives 1.
func NiceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	step := niceStep(v / 4)
	return math.Ceil(v/step-1e-9) * step
}

// timeSteps are the steps a time axis may use, shortest first.
var timeSteps = []time.Duration{
	10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// TimeTicks are the times where a time axis gets a label: whole steps of
// the wall clock (every 2 minutes, every hour…) between from and to, at
// most about n of them, with the step chosen.
func TimeTicks(from, to time.Time, n int) ([]time.Time, time.Duration) {
	span := to.Sub(from)
	if span <= 0 || n < 1 {
		return []time.Time{to}, 0
	}
	step := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if span/s <= time.Duration(n) {
			step = s
			break
		}
	}
	for span/step > time.Duration(n) { // longer than a day a step: whole days
		step *= 2
	}
	// Whole steps of local time: 15:10, 15:20, not 15:07, 15:17.
	_, off := from.Zone()
	shift := time.Duration(off) * time.Second
	first := from.Add(shift).Truncate(step).Add(-shift)
	if first.Before(from) {
		first = first.Add(step)
	}
	var out []time.Time
	for t := first; !t.After(to); t = t.Add(step) {
		out = append(out, t)
	}
	return out, step
}

// TimeLabel writes a tick of a time axis with the given step: "15:04",
// with seconds when the step is under a minute, with the day when it is a
// day or more.
func TimeLabel(t time.Time, step time.Duration) string {
	t = t.Local()
	switch {
	case step < time.Minute:
		return t.Format("15:04:05")
	case step >= 24*time.Hour:
		return t.Format("Mon 2 Jan")
	}
	return t.Format("15:04")
}
