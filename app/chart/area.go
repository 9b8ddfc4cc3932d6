package chart

import (
	"image"
	"image/color"
	"sort"
	"time"
)

// area paints a series as Task Manager does: a line over a lightly
// filled area, one pixel column at a time, into an image of the plot's
// size in device pixels (so a HiDPI display gets a sharp line, not a
// stretched one). Each column shows the highest value read in its time,
// so a short spike stays visible however long the span; a column with no
// known value, or inside a gap longer than gap, is left empty.
func area(w, h int, pts []Point, from, to time.Time, top float64, gap time.Duration, c color.Color, line float64) image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	span := to.Sub(from)
	if w < 1 || h < 1 || span <= 0 || top <= 0 {
		return img
	}
	cols := columns(pts, from, span, w, gap)
	r, g, b, _ := c.RGBA()
	solid := color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0xff}
	fill := color.NRGBA{solid.R, solid.G, solid.B, 0x40}
	yOf := func(v float64) int {
		y := int(float64(h) - min(v, top)/top*float64(h-1) - 1)
		return max(0, min(h-1, y))
	}
	lw := max(1, int(line+0.5))
	prev := -1
	for x, v := range cols {
		if v < 0 {
			prev = -1
			continue
		}
		y := yOf(v)
		for yy := y; yy < h; yy++ {
			img.SetNRGBA(x, yy, fill)
		}
		// The line joins this column to the last one, however steep.
		lo, hi := y, y
		if prev >= 0 {
			lo, hi = min(lo, prev), max(hi, prev)
		}
		for yy := lo; yy <= hi+lw-1 && yy < h; yy++ {
			img.SetNRGBA(x, yy, solid)
		}
		prev = y
	}
	return img
}

// columns is the value of each of w pixel columns over span from from:
// the highest known value read in the column's time, else the value
// between its neighbours, or -1 where nothing was read (unknown values,
// gaps longer than gap, before the first point or after the last).
func columns(pts []Point, from time.Time, span time.Duration, w int, gap time.Duration) []float64 {
	cols := make([]float64, w)
	at := func(x float64) time.Time { return from.Add(time.Duration(x / float64(w) * float64(span))) }
	for x := range cols {
		start, end := at(float64(x)), at(float64(x+1))
		i := sort.Search(len(pts), func(i int) bool { return !pts[i].T.Before(start) })
		best := -1.0
		for j := i; j < len(pts) && pts[j].T.Before(end); j++ {
			if pts[j].Known() && pts[j].V > best {
				best = pts[j].V
			}
		}
		if best < 0 && i > 0 && i < len(pts) {
			a, b := pts[i-1], pts[i]
			if a.Known() && b.Known() && b.T.Sub(a.T) <= gap {
				mid := at(float64(x) + 0.5)
				f := float64(mid.Sub(a.T)) / float64(b.T.Sub(a.T))
				best = a.V + (b.V-a.V)*max(0, min(1, f))
			}
		}
		cols[x] = best
	}
	return cols
}
