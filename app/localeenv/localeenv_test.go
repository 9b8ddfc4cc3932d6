package localeenv

import (
	"os"
	"testing"
)

func TestHideAndRestore(t *testing.T) {
	for _, tc := range []struct {
		name               string
		lcAll, lcMsg, lang string
		hidden             string // the variable set to C, "" for none
	}{
		{"LANG=C.UTF-8", "", "", "C.UTF-8", "LANG"},
		{"LANG=C.utf8", "", "", "C.utf8", "LANG"},
		{"LANG=POSIX.UTF-8", "", "", "POSIX.UTF-8", "LANG"},
		{"LC_ALL wins", "C.UTF-8", "", "en_US.UTF-8", "LC_ALL"},
		{"LC_MESSAGES before LANG", "", "C.UTF-8", "de_DE.UTF-8", "LC_MESSAGES"},
		{"a real language is left alone", "", "", "en_US.UTF-8", ""},
		{"plain C is understood already", "", "", "C", ""},
		{"LC_ALL set to a language hides LANG's C.UTF-8", "de_DE.UTF-8", "", "C.UTF-8", ""},
		{"nothing set", "", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("LC_ALL", tc.lcAll)
			t.Setenv("LC_MESSAGES", tc.lcMsg)
			t.Setenv("LANG", tc.lang)
			before := map[string]string{"LC_ALL": tc.lcAll, "LC_MESSAGES": tc.lcMsg, "LANG": tc.lang}
			hide()
			for name, v := range before {
				want := v
				if name == tc.hidden {
					want = "C"
				}
				if got := os.Getenv(name); got != want {
					t.Errorf("after hide, %s = %q, want %q", name, got, want)
				}
			}
			Restore()
			for name, v := range before {
				if got := os.Getenv(name); got != v {
					t.Errorf("after Restore, %s = %q, want %q", name, got, v)
				}
			}
		})
	}
}
