// This file holds the strict reading of a scenario file that
// encoding/json's decoder does not give: it matches object keys to struct
// fields without regard to case, even with DisallowUnknownFields, takes
// null for any field (or the whole file) as "not given", and any string
// or number as a value. A scenario stands for what a driver would say, so
// what no driver says is refused, naming what is wrong.

package gpu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"sync"
)

// checkKeys walks raw as the JSON of a value of type t and refuses what
// decoding into t would let through: an object that is null or not an
// object, a key no field of t is spelled as exactly (`"Driver"` for
// driver), a key given twice, and null for a field that is not a pointer
// (only a pointer field says "not known" with null). where names the
// value in errors ("" for the whole file). Types of scalars are left to
// the decoder.
func checkKeys(raw []byte, t reflect.Type, where string) error {
	raw = bytes.TrimSpace(raw)
	switch t.Kind() {
	case reflect.Pointer:
		return checkKeys(raw, t.Elem(), where)
	case reflect.Slice:
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return fmt.Errorf("%s is not a list", scenarioPart(where))
		}
		for i, e := range elems {
			if err := checkKeys(e, t.Elem(), fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Struct:
	default:
		return nil
	}
	if len(raw) == 0 || raw[0] != '{' {
		what := "not a JSON object"
		if string(raw) == "null" {
			what = "null, not a JSON object"
		}
		return fmt.Errorf("%s is %s", scenarioPart(where), what)
	}
	fields := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		if key, _, _ := strings.Cut(f.Tag.Get("json"), ","); key != "" && key != "-" {
			fields[key] = f
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // the '{'
		return fmt.Errorf("%s: %w", scenarioPart(where), err)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%s: %w", scenarioPart(where), err)
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return fmt.Errorf("%s: %w", scenarioPart(where), err)
		}
		f, ok := fields[key]
		switch {
		case !ok:
			return unknownField(where, key, fields)
		case seen[key]:
			return fmt.Errorf("%s: %q is given twice", scenarioPart(where), key)
		case string(value) == "null" && f.Type.Kind() != reflect.Pointer:
			return fmt.Errorf("%s: %q is null; leave it out instead", scenarioPart(where), key)
		}
		seen[key] = true
		if string(value) == "null" {
			continue
		}
		if err := checkKeys(value, f.Type, fieldPath(where, key)); err != nil {
			return err
		}
	}
	return nil
}

// unknownField says that key is not a field of the object at where, and
// which field it was probably meant to be when only its case differs.
func unknownField(where, key string, fields map[string]reflect.StructField) error {
	for k := range fields {
		if strings.EqualFold(k, key) {
			return fmt.Errorf("%s: unknown field %q (field names are case-sensitive: %q)", scenarioPart(where), key, k)
		}
	}
	return fmt.Errorf("%s: unknown field %q", scenarioPart(where), key)
}

// scenarioPart is where for a message: "the scenario" for the whole file.
func scenarioPart(where string) string {
	if where == "" {
		return "the scenario"
	}
	return where
}

// fieldPath names a field of the value at where: "devices[0].processes".
func fieldPath(where, key string) string {
	if where == "" {
		return key
	}
	return where + "." + key
}

// What a driver can say, as patterns and bounds.
// Compiled at first use, not at each start of the program: only a
// simulated GPU's scenario is checked with them, and regexps were a
// seventh of a check's start (docs/performance.md).
var (
	// simDriverVersion is an NVIDIA driver version: "550.54.15", "580".
	simDriverVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{1,4}(\.[0-9]{1,5}){0,3}$`) })
	// simCUDAVersion is the CUDA version a driver supports: "12.4".
	simCUDAVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[1-9][0-9]?\.[0-9]{1,2}$`) })
	// simComputeCapability is major.minor: "8.0", "12.0".
	simComputeCapability = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[1-9][0-9]?\.[0-9]$`) })
)

const (
	maxMemoryBytes = 1 << 44 // 16 TiB: no GPU has a thousandth of it
	maxPercent     = 100
	maxTemperature = 150    // °C: GPUs shut down far below
	maxWatts       = 10_000 // a GPU board draws a few hundred to about 1,500
	maxPID         = math.MaxUint32
)

// check refuses values no driver gives: versions that are not versions,
// a compute capability that is not major.minor, percentages over 100,
// and numbers out of any GPU's range.
func (sc scenario) check() error {
	switch {
	case sc.Driver != "" && !simDriverVersion().MatchString(sc.Driver):
		return fmt.Errorf("driver %q is not an NVIDIA driver version (digits and dots, like \"550.54.15\")", sc.Driver)
	case sc.CUDADriver != "" && !simCUDAVersion().MatchString(sc.CUDADriver):
		return fmt.Errorf("cuda_driver %q is not a CUDA version (major.minor, like \"12.4\")", sc.CUDADriver)
	case sc.CUDADriver != "" && sc.Driver == "":
		return fmt.Errorf("cuda_driver is given but driver is not")
	}
	for i, d := range sc.Devices {
		where := fmt.Sprintf("devices[%d]", i)
		if d.ComputeCapability != "" && !simComputeCapability().MatchString(d.ComputeCapability) {
			return fmt.Errorf("%s: compute_capability %q is not a compute capability (major.minor, like \"8.0\")", where, d.ComputeCapability)
		}
		if err := checkRanges(where, d); err != nil {
			return err
		}
		if err := checkHealth(where, d); err != nil {
			return err
		}
		for j, p := range d.Processes {
			pw := fmt.Sprintf("%s.processes[%d]", where, j)
			if p.PID <= 0 || int64(p.PID) > maxPID {
				return fmt.Errorf("%s: pid %d is not a process ID", pw, p.PID)
			}
			if err := firstOver(pw, []bound{{"used_memory_bytes", u64(p.UsedMemoryBytes), maxMemoryBytes},
				{"shared_memory_bytes", u64(p.SharedMemoryBytes), maxMemoryBytes}, {"sm_percent", u32(p.SMPercent), maxPercent}, {"mem_percent", u32(p.MemPercent), maxPercent}}); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRanges refuses a device's numbers out of any GPU's range, and used
// memory over the total.
func checkRanges(where string, d simDevice) error {
	total := float64(d.MemoryTotalBytes)
	if err := firstOver(where, []bound{{"memory_total_bytes", &total, maxMemoryBytes}, {"memory_used_bytes", u64(d.MemoryUsedBytes), maxMemoryBytes},
		{"utilization_gpu_percent", u32(d.UtilizationGPU), maxPercent}, {"utilization_memory_percent", u32(d.UtilizationMemory), maxPercent},
		{"temperature_c", u32(d.TemperatureC), maxTemperature},
		{"power_watts", d.PowerWatts, maxWatts}, {"power_limit_watts", d.PowerLimitWatts, maxWatts}}); err != nil {
		return err
	}
	if d.MemoryUsedBytes != nil && d.MemoryTotalBytes > 0 && *d.MemoryUsedBytes > d.MemoryTotalBytes {
		return fmt.Errorf("%s: memory_used_bytes %d is more than memory_total_bytes %d", where, *d.MemoryUsedBytes, d.MemoryTotalBytes)
	}
	return nil
}

// bound is a number a scenario may give (nil when it does not) and the
// most it may be; none may be negative.
type bound struct {
	field string
	value *float64
	max   float64
}

// firstOver says which of bs is out of its range, if one is.
func firstOver(where string, bs []bound) error {
	for _, b := range bs {
		if b.value == nil {
			continue
		}
		if v := *b.value; v < 0 || v > b.max || math.IsNaN(v) {
			return fmt.Errorf("%s: %s %v is out of range (0 to %v)", where, b.field, v, b.max)
		}
	}
	return nil
}

func u64(p *uint64) *float64 {
	if p == nil {
		return nil
	}
	v := float64(*p)
	return &v
}

func u32(p *uint32) *float64 {
	if p == nil {
		return nil
	}
	v := float64(*p)
	return &v
}

// checkHealth refuses health values no driver gives: a clock-event
// reason NVML has no bit for, a PCIe generation or width no link has, a
// margin no GPU reports.
func checkHealth(where string, d simDevice) error {
	for _, r := range d.ClocksEventReasons {
		known := false
		for _, b := range reasonBits {
			known = known || b.name == r
		}
		if !known {
			names := make([]string, len(reasonBits))
			for i, b := range reasonBits {
				names[i] = b.name
			}
			return fmt.Errorf("%s: clocks_event_reasons: %q is not one of %s", where, r, strings.Join(names, ", "))
		}
	}
	if m := d.MarginTemperatureC; m != nil && (*m < -maxTemperature || *m > maxTemperature) {
		return fmt.Errorf("%s: margin_temperature_c %d is out of range (-%d to %d)", where, *m, maxTemperature, maxTemperature)
	}
	if p := d.PCIe; p != nil {
		for _, v := range []struct {
			field string
			value uint32
			max   uint32
		}{{"gen", p.Gen, maxPCIeGen}, {"max_gen", p.MaxGen, maxPCIeGen}, {"card_max_gen", p.CardMaxGen, maxPCIeGen},
			{"width", p.Width, maxPCIeWidth}, {"max_width", p.MaxWidth, maxPCIeWidth}} {
			if v.value > v.max {
				return fmt.Errorf("%s.pcie: %s %d is out of range (1 to %d)", where, v.field, v.value, v.max)
			}
		}
		if p.Gen == 0 || p.Width == 0 || p.MaxGen == 0 || p.MaxWidth == 0 {
			return fmt.Errorf("%s.pcie: gen, width, max_gen and max_width are all needed, each at least 1", where)
		}
	}
	return nil
}

const (
	maxPCIeGen   = 7  // PCIe 7.0 is the newest generation specified
	maxPCIeWidth = 32 // x32, the widest link PCIe defines
)
