package pyspec

import (
	"strconv"
	"sync"
	"testing"

	pep440 "github.com/aquasecurity/go-pep440-version"
)

// versionTexts are versions of releases of different lengths (Compare
// pads the shorter, which is what made a kept pep440.Version unsafe to
// share), pre-, post-, dev-releases, local parts and no version at all.
var versionTexts = []string{"2.5.1+cu121", "2.5", "2.5.1.0.0", "0.20.1+cu121", "1!2.0rc1.post2.dev3", "2.6.0.dev20241112+cu126", "not a version", ""}

// TestVersionsAreTheLibrarys: VersionOf and CompareVersions answer what
// go-pep440-version answers, an error included, the first time and
// every time after, from goroutines at once (run with -race: they share
// what they keep, and must share nothing a comparison writes).
func TestVersionsAreTheLibrarys(t *testing.T) {
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				for _, a := range versionTexts {
					want, wantErr := pep440.Parse(a)
					got, err := VersionOf(a)
					if (err == nil) != (wantErr == nil) || err == nil && got != (Version{Public: want.Public(), Base: want.BaseVersion(), Local: want.Local()}) {
						t.Errorf("VersionOf(%q) = %+v, %v; pep440: %v, %v", a, got, err, want, wantErr)
					}
					for _, b := range versionTexts {
						vb, errB := pep440.Parse(b)
						c, err := CompareVersions(a, b)
						if (err == nil) != (wantErr == nil && errB == nil) {
							t.Errorf("CompareVersions(%q, %q) error = %v", a, b, err)
						} else if err == nil && c != want.Compare(vb) {
							t.Errorf("CompareVersions(%q, %q) = %d, pep440 %d", a, b, c, want.Compare(vb))
						}
					}
				}
			}
		}()
	}
	wg.Wait()
}

// TestVersionsKeptAreBounded: past maxParsed texts a new one is still
// answered right, and no more are kept.
func TestVersionsKeptAreBounded(t *testing.T) {
	for i := range maxParsed + 10 {
		s := "1.0." + strconv.Itoa(i)
		if got, err := VersionOf(s); err != nil || got.Public != s {
			t.Fatalf("VersionOf(%q) = %+v, %v", s, got, err)
		}
	}
	if n := versions.n.Load(); n > maxParsed {
		t.Errorf("%d texts kept, want at most %d", n, maxParsed)
	}
}

// TestParseSpecifiersIsTheLibrarys: the kept specifiers answer Check as
// freshly made ones do, from goroutines at once, and a text that is no
// specifier is an error each time.
func TestParseSpecifiersIsTheLibrarys(t *testing.T) {
	probes := []string{"3.12", "3.13", "2.5.1+cu121", "2.6.0rc1", "2.5"}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, text := range []string{"<3.13", ">=2.5,<2.7", "==2.5.*", "~=3.12", "!=2.6.0rc1", "<<3", ""} {
				want, wantErr := pep440.NewSpecifiers(text, pep440.WithPreRelease(true))
				got, err := parseSpecifiers(text)
				if (err == nil) != (wantErr == nil) {
					t.Errorf("parseSpecifiers(%q) error = %v, pep440's %v", text, err, wantErr)
					continue
				}
				if err != nil {
					continue
				}
				for _, p := range probes {
					v, w := pep440.MustParse(p), pep440.MustParse(p)
					if got.Check(v) != want.Check(w) {
						t.Errorf("%q.Check(%s) = %v, pep440's %v", text, p, got.Check(v), want.Check(w))
					}
				}
			}
		}()
	}
	wg.Wait()
}
