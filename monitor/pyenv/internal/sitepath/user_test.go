package sitepath

import (
	"path/filepath"
	"testing"
)

// TestUserSite: site.USER_SITE as CPython computes it from the
// environment and the home folder, per scheme, and off when
// PYTHONNOUSERSITE is set or the base is unknown.
func TestUserSite(t *testing.T) {
	for _, tt := range []struct {
		name    string
		env     map[string]string
		home    string
		windows bool
		want    string
	}{
		{"POSIX home", nil, "/home/ana", false, filepath.Join("/home/ana", ".local", "lib", "python3.11", "site-packages")},
		{"PYTHONUSERBASE", map[string]string{"PYTHONUSERBASE": "/opt/ub"}, "/home/ana", false, filepath.Join("/opt/ub", "lib", "python3.11", "site-packages")},
		{"Windows APPDATA", map[string]string{"APPDATA": "/appdata"}, "", true, filepath.Join("/appdata", "Python", "Python311", "site-packages")},
		{"Windows without APPDATA", nil, "/home/ana", true, ""},
		{"POSIX without a home", nil, "", false, ""},
		{"PYTHONNOUSERSITE", map[string]string{"PYTHONNOUSERSITE": "1"}, "/home/ana", false, ""},
	} {
		getenv := func(k string) string { return tt.env[k] }
		if got := UserSite(getenv, tt.home, tt.windows, "3.11"); got != tt.want {
			t.Errorf("%s: UserSite = %q, want %q", tt.name, got, tt.want)
		}
	}
}
