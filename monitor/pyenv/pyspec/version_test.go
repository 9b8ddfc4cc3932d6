package pyspec

import (
	"strconv"
	"sync"
	"testing"

	pep440 "github.com/aquasecurity/go-pep440-version"
)

// TestParseVersionIsTheLibrarys: ParseVersion answers what pep440.Parse
// answers, an error included, the first time and every time after, from
// goroutines at once; and what it keeps stops at maxParsed texts while
// every parse beyond them is still right.
func TestParseVersionIsTheLibrarys(t *testing.T) {
	texts := []string{"2.5.1+cu121", "2.5.1", "0.20.1+cu121", "1!2.0rc1.post2.dev3", "2.6.0.dev20241112+cu126", "not a version", ""}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				for _, s := range texts {
					want, wantErr := pep440.Parse(s)
					got, err := ParseVersion(s)
					if (err == nil) != (wantErr == nil) || err == nil && (got.Compare(want) != 0 || got.String() != want.String() || got.Local() != want.Local()) {
						t.Errorf("ParseVersion(%q) = %v, %v; pep440.Parse: %v, %v", s, got, err, want, wantErr)
					}
				}
			}
		}()
	}
	wg.Wait()
	for i := range maxParsed + 10 {
		s := "1.0." + strconv.Itoa(i)
		want := pep440.MustParse(s)
		if got, err := ParseVersion(s); err != nil || got.Compare(want) != 0 {
			t.Fatalf("ParseVersion(%q) = %v, %v", s, got, err)
		}
	}
	if n := versions.n.Load(); n > maxParsed {
		t.Errorf("%d texts kept, want at most %d", n, maxParsed)
	}
}

// TestParseSpecifiersIsTheLibrarys: the kept specifiers answer Check as
// freshly made ones do, and a text that is no specifier is an error each
// time.
func TestParseSpecifiersIsTheLibrarys(t *testing.T) {
	probes := []string{"3.12", "3.13", "2.5.1+cu121", "2.6.0rc1"}
	for _, text := range []string{"<3.13", ">=2.5,<2.7", "==2.5.*", "~=3.12", "!=2.6.0rc1", "<<3", ""} {
		want, wantErr := pep440.NewSpecifiers(text, pep440.WithPreRelease(true))
		for range 2 {
			got, err := parseSpecifiers(text)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("parseSpecifiers(%q) error = %v, pep440's %v", text, err, wantErr)
			}
			if err != nil {
				continue
			}
			for _, p := range probes {
				v := pep440.MustParse(p)
				if got.Check(v) != want.Check(v) {
					t.Errorf("%q.Check(%s) = %v, pep440's %v", text, p, got.Check(v), want.Check(v))
				}
			}
		}
	}
}
