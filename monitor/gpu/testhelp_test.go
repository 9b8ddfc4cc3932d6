package gpu

import "encoding/json"

// dump renders v for a failure message, pointers followed.
func dump(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// slicesDelete returns s without the elements del matches, leaving s alone.
func slicesDelete[T any](s []T, del func(T) bool) []T {
	out := []T{}
	for _, v := range s {
		if !del(v) {
			out = append(out, v)
		}
	}
	return out
}
