package prom

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is the text exposition format, version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/), written
// here rather than by the Prometheus client library: the library's package
// initialisation (its default registry, protobuf's registry, procfs, YAML)
// ran at every start of the one CLI, `version` and `check` included, and
// cost it about 10 ms and 5 MB (docs/performance.md). GPU Canary needs
// only gauges and counters of a fixed set of families, written as text.
//
// The output is what the client library wrote for the same metrics, byte
// for byte: families sorted by name, a family without series left out,
// label pairs sorted by name, series sorted by their label values taken in
// that order, numbers as Go's shortest %g (expo_test.go holds the two side
// by side).

// kind is a family's TYPE.
type kind uint8

const (
	gaugeKind kind = iota
	counterKind
)

func (k kind) String() string {
	if k == counterKind {
		return "counter"
	}
	return "gauge"
}

// Desc describes one metric family: its name, HELP, TYPE and label names.
type Desc struct {
	name, help string
	kind       kind
	labels     []string
	// order is the indexes of labels sorted by name: the order labels are
	// written and series sorted in.
	order []int
}

func newDesc(name, help string, k kind, labels ...string) *Desc {
	order := make([]int, len(labels))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	return &Desc{name: name, help: help, kind: k, labels: labels, order: order}
}

// Name is the family's metric name.
func (d *Desc) Name() string { return d.name }

// Help is the family's HELP text, unescaped.
func (d *Desc) Help() string { return d.help }

// Family is one metric family of a scrape: a description and its series.
type Family struct {
	desc    *Desc
	samples []sample
}

// Name is the family's metric name.
func (f *Family) Name() string { return f.desc.name }

// sample is one series: its label values, in the order of desc.labels.
type sample struct {
	values []string
	value  float64
}

// Gatherer gives the metric families of one exposition. A non-nil error
// with families means some metrics could not be read: the rest are whole.
type Gatherer interface {
	Gather() ([]*Family, error)
}

// source adds its series to a batch.
type source interface {
	collect(b *batch)
}

// batch gathers the series of one exposition, family by family.
type batch struct {
	byDesc map[*Desc]*Family
	errs   []error
}

func newBatch() *batch { return &batch{byDesc: map[*Desc]*Family{}} }

// add adds a series to d's family; a series with the wrong number of
// label values is an error, and left out.
func (b *batch) add(d *Desc, v float64, values ...string) {
	if len(values) != len(d.labels) {
		b.errs = append(b.errs, fmt.Errorf("metric %s: %d label values for %d labels", d.name, len(values), len(d.labels)))
		return
	}
	f := b.byDesc[d]
	if f == nil {
		f = &Family{desc: d}
		b.byDesc[d] = f
	}
	f.samples = append(f.samples, sample{values: values, value: v})
}

// fail records that part of the metrics could not be read.
func (b *batch) fail(err error) { b.errs = append(b.errs, err) }

// families are the batch's families, sorted, each family's series sorted,
// a series that repeats another's labels dropped as an error (the client
// library's registry did the same).
func (b *batch) families() ([]*Family, error) {
	fams := make([]*Family, 0, len(b.byDesc))
	for _, f := range b.byDesc {
		if len(f.samples) > 0 {
			fams = append(fams, f)
		}
	}
	slices.SortFunc(fams, func(x, y *Family) int { return strings.Compare(x.desc.name, y.desc.name) })
	for i := 1; i < len(fams); i++ {
		if fams[i].desc.name == fams[i-1].desc.name {
			b.errs = append(b.errs, fmt.Errorf("metric %s: two families of that name", fams[i].desc.name))
		}
	}
	for _, f := range fams {
		order := f.desc.order
		slices.SortStableFunc(f.samples, func(x, y sample) int {
			for _, i := range order {
				if c := strings.Compare(x.values[i], y.values[i]); c != 0 {
					return c
				}
			}
			return 0
		})
		kept := f.samples[:1]
		for _, s := range f.samples[1:] {
			if slices.Equal(s.values, kept[len(kept)-1].values) {
				b.errs = append(b.errs, fmt.Errorf("metric %s: a series with labels %q was given twice", f.desc.name, s.values))
				continue
			}
			kept = append(kept, s)
		}
		f.samples = kept
	}
	return fams, errors.Join(b.errs...)
}

// Registry is the collectors of one exposition.
type Registry struct {
	sources []source
}

var _ Gatherer = (*Registry)(nil)

// Gather collects every collector's series once.
func (r *Registry) Gather() ([]*Family, error) {
	b := newBatch()
	for _, c := range r.sources {
		c.collect(b)
	}
	return b.families()
}

// appendText appends the families in the text format.
func appendText(out []byte, fams []*Family) []byte {
	for _, f := range fams {
		d := f.desc
		out = append(out, "# HELP "...)
		out = append(out, d.name...)
		out = append(out, ' ')
		out = appendEscaped(out, d.help, false)
		out = append(out, "\n# TYPE "...)
		out = append(out, d.name...)
		out = append(out, ' ')
		out = append(out, d.kind.String()...)
		out = append(out, '\n')
		for _, s := range f.samples {
			out = append(out, d.name...)
			if len(d.labels) > 0 {
				out = append(out, '{')
				for n, i := range d.order {
					if n > 0 {
						out = append(out, ',')
					}
					out = append(out, d.labels[i]...)
					out = append(out, `="`...)
					out = appendEscaped(out, s.values[i], true)
					out = append(out, '"')
				}
				out = append(out, '}')
			}
			out = append(out, ' ')
			out = appendFloat(out, s.value)
			out = append(out, '\n')
		}
	}
	return out
}

// writeText writes the families in the text format.
func writeText(w io.Writer, fams []*Family) error {
	_, err := w.Write(appendText(nil, fams))
	return err
}

// appendEscaped appends s escaped as the format wants: a backslash and a
// line feed always, a double quote in a label value. Bytes that are not
// UTF-8 (a path on Linux may hold any) become U+FFFD, as the format is
// UTF-8 and a scraper rejects the whole scrape otherwise.
func appendEscaped(out []byte, s string, quote bool) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			out = append(out, `\\`...)
		case c == '\n':
			out = append(out, `\n`...)
		case c == '"' && quote:
			out = append(out, `\"`...)
		default:
			out = append(out, c)
		}
	}
	return out
}

// appendFloat appends v as the format writes a value: +Inf, -Inf, NaN, or
// Go's shortest representation ('g', as the client library writes it).
func appendFloat(out []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(out, "NaN"...)
	case math.IsInf(v, 1):
		return append(out, "+Inf"...)
	case math.IsInf(v, -1):
		return append(out, "-Inf"...)
	}
	return strconv.AppendFloat(out, v, 'g', -1, 64)
}
