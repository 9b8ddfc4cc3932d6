package app

import (
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/gpucanary/gpucanary/app/link"
)

// TestShownOnceAWindowIsOpen: Deps.Shown, which starts the engine of the
// windows run alone, is called once, when the first request that opens a
// window has been handled, and never for requests that open none.
func TestShownOnceAWindowIsOpen(t *testing.T) {
	for _, tc := range []struct {
		name     string
		requests []string
		want     int
	}{
		{"nothing opened", []string{""}, 0},
		{"the environments", []string{link.ShowEnvs}, 1},
		{"two windows", []string{link.ShowEnvs, link.ShowGPUs}, 1},
		{"a request that opens nothing, then a window", []string{"", link.ShowProcesses}, 1},
		{"the same window twice", []string{link.ShowHistory, link.ShowHistory}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			u := newUI(test.NewTempApp(t), Deps{Engine: fixedEngine{}, OnIdle: func(int) {}, Shown: func() { calls++ }})
			for _, show := range tc.requests {
				u.handle(link.Request{Show: show})
			}
			if calls != tc.want {
				t.Errorf("Shown called %d times, want %d", calls, tc.want)
			}
		})
	}
}
