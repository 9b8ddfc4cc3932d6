package chart

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Unit is what a chart's values are and how to write one.
type Unit struct {
	// Name is the unit written after a value ("%", "°C", "W", "GiB").
	Name string
	// Scale divides a raw value before it is written (1<<30 for bytes
	// shown in GiB); 0 means 1.
	Scale float64
}

// The units of the GPU charts.
var (
	Percent = Unit{Name: "%"}
	Celsius = Unit{Name: "°C"}
	Watts   = Unit{Name: "W"}
	GiB     = Unit{Name: "GiB", Scale: 1 << 30}
)

func (u Unit) scaled(v float64) float64 {
	if u.Scale == 0 {
		return v
	}
	return v / u.Scale
}

// Format writes a raw value in the unit: "87 %", "9.5 GiB", "250 W".
// Values under 10 keep one decimal, larger ones none.
func (u Unit) Format(v float64) string {
	return u.Number(v) + " " + u.Name
}

// Number is Format without the unit, for an axis whose unit is said once.
func (u Unit) Number(v float64) string {
	s := u.scaled(v)
	if math.Abs(s) >= 10 || s == math.Trunc(s) {
		return strconv.FormatFloat(math.Round(s), 'f', 0, 64)
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", s), ".0")
}

// Tick writes an axis tick, in the unit's scale: ticks are chosen in
// that scale (whole GiB, not whole bytes), so a tick is never
// rounded into its neighbour's label.
func (u Unit) Tick(v float64) string {
	s := u.scaled(v)
	if s == math.Trunc(s) {
		return strconv.FormatFloat(s, 'f', 0, 64)
	}
	return strconv.FormatFloat(s, 'f', -1, 64)
}

// ticks are the axis ticks from 0 to top (a raw value), chosen in the
// unit's scale and given back raw.
func (u Unit) ticks(top float64, n int) []float64 {
	k := u.Scale
	if k == 0 {
		k = 1
	}
	out := Ticks(0, top/k, n)
	for i := range out {
		out[i] *= k
	}
	return out
}

// axisTop is the top of the value axis for values up to hi: the limit
// when one is known and not exceeded (memory total, power limit, 100 %),
// else a round number above hi, in the unit's scale.
func (u Unit) axisTop(hi, limit float64) float64 {
	if limit > 0 && hi <= limit {
		return limit
	}
	k := u.Scale
	if k == 0 {
		k = 1
	}
	return NiceMax(hi/k) * k
}
