package guard

import "testing"

// TestAddConstraint: only lines are inserted, and ours joins the value pip
// uses for install.
func TestAddConstraint(t *testing.T) {
	cmt := []string{"c"}
	cases := []struct{ name, old, want string }{
		{"none", "", "[install]\n# c\nconstraint = /x\n"},
		{"no end of line", "[global]\ntimeout = 5", "[global]\ntimeout = 5\n\n[install]\n# c\nconstraint = /x\n"},
		{"install section", "[install]\nuser = false\n", "[install]\n# c\nconstraint = /x\nuser = false\n"},
		{"their install constraint, continued", "[install]\nconstraint = /a\n    /b\nuser = false\n",
			"[install]\n# c\nconstraint = /a\n    /b\n    /x\nuser = false\n"},
		{"their global constraint", "[global]\nConstraint: /a\n[install]\nuser = false\n",
			"[global]\n# c\nConstraint: /a\n    /x\n[install]\nuser = false\n"},
		{"install wins over global", "[global]\nconstraint = /a\n[install]\nconstraint = /b\n",
			"[global]\nconstraint = /a\n[install]\n# c\nconstraint = /b\n    /x\n"},
		{"CRLF", "[global]\r\ntimeout = 5\r\n", "[global]\r\ntimeout = 5\r\n\r\n[install]\r\n# c\r\nconstraint = /x\r\n"},
		{"comment inside their value", "[install]\nconstraint = /a\n# theirs\n    /b\n",
			"[install]\n# c\nconstraint = /a\n# theirs\n    /b\n    /x\n"},
	}
	for _, c := range cases {
		if got := string(addConstraint([]byte(c.old), "/x", cmt, "\n")); got != c.want {
			t.Errorf("%s:\ngot  %q\nwant %q", c.name, got, c.want)
		}
	}
}
