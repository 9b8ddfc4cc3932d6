//go:build linux && cgo

package gpu

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// failAllFuncs sets every nil XxxFunc field of the go-nvml mock m (a
// pointer to mock.Interface or mock.Device) to a function that fails the
// test, except those named in allow, so a test can assert that nothing else
// was called, even the functions this package does not use today.
func failAllFuncs(t *testing.T, m any, allow ...string) {
	t.Helper()
	v := reflect.ValueOf(m).Elem()
	for i := range v.NumField() {
		f, field := v.Field(i), v.Type().Field(i)
		name, ok := strings.CutSuffix(field.Name, "Func")
		if !ok || f.Kind() != reflect.Func || !f.IsNil() || slices.Contains(allow, name) {
			continue
		}
		f.Set(reflect.MakeFunc(f.Type(), func([]reflect.Value) []reflect.Value {
			t.Fatalf("%s.%s was called", v.Type().Name(), name)
			return nil
		}))
	}
}
