package chart

import "time"

// Downsample fits points (in time order) into n buckets of equal time
// from from to to, for a chart n pixels wide: each bucket keeps its
// lowest and its highest point, in the order they happened, so a short
// spike survives where an average would flatten it. Points outside the
// span are dropped; a bucket with no known value gives nothing, and one
// whose points were all unknown gives one unknown point, so the line
// still breaks there. With no more points than 2n in the span, they are
// returned as they are.
func Downsample(points []Point, from, to time.Time, n int) []Point {
	in := inSpan(points, from, to)
	if len(in) <= 2*n || n < 1 || !to.After(from) {
		return in
	}
	width := to.Sub(from)
	bucket := func(t time.Time) int {
		return min(n-1, int(int64(t.Sub(from))*int64(n)/int64(width)))
	}
	out := make([]Point, 0, 2*n)
	for i := 0; i < len(in); {
		b := bucket(in[i].T)
		j := i
		lo, hi, unknown := -1, -1, -1
		for ; j < len(in) && bucket(in[j].T) == b; j++ {
			switch p := in[j]; {
			case !p.Known():
				if unknown < 0 {
					unknown = j
				}
			case lo < 0:
				lo, hi = j, j
			case p.V < in[lo].V:
				lo = j
			case p.V > in[hi].V:
				hi = j
			}
		}
		switch {
		case lo < 0:
			out = append(out, in[unknown])
		case lo == hi:
			out = append(out, in[lo])
		case lo < hi:
			out = append(out, in[lo], in[hi])
		default:
			out = append(out, in[hi], in[lo])
		}
		i = j
	}
	return out
}

// Last is the newest known value of points, and whether there is one.
func Last(points []Point) (float64, bool) {
	for i := len(points) - 1; i >= 0; i-- {
		if points[i].Known() {
			return points[i].V, true
		}
	}
	return 0, false
}

// Max is the highest known value of points (0 with none).
func Max(points []Point) float64 {
	m := 0.0
	for _, p := range points {
		if p.Known() && p.V > m {
			m = p.V
		}
	}
	return m
}
