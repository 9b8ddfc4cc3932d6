package owned

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Well-known SIDs: the administrator (Administrators, SYSTEM) may own a
// trusted path where a Policy allows it; a write grant to any of the
// broad groups makes a path writable by other users.
var (
	adminSIDs = []string{"S-1-5-32-544", "S-1-5-18"}
	broadSIDs = []string{"S-1-1-0", "S-1-5-32-545", "S-1-5-11"} // Everyone, Users, Authenticated Users
)

// writeMask is every right that lets its holder change a folder's or a
// file's content, or its permissions.
const writeMask = windows.FILE_WRITE_DATA | windows.FILE_APPEND_DATA | windows.FILE_WRITE_EA |
	windows.FILE_WRITE_ATTRIBUTES | windows.WRITE_DAC | windows.WRITE_OWNER | windows.DELETE |
	windows.GENERIC_WRITE | windows.GENERIC_ALL

func checkLeaf(path string, p Policy) error {
	attrs, err := windows.GetFileAttributes(windows.StringToUTF16Ptr(path))
	if err != nil {
		return fmt.Errorf("checking who owns %s: %w", path, err)
	}
	owner, dacl, err := security(path)
	if err != nil {
		return err
	}
	switch {
	case attrs&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		return &Untrusted{Path: path, Owner: name(owner), Why: "it is a link, and a link is never used as a store"}
	case !mine(owner) && !(p.Admin && isAny(owner, adminSIDs)):
		return &Untrusted{Path: path, Owner: name(owner), Why: "it belongs to another user"}
	}
	if sid, ok := broadWrite(dacl); ok {
		return &Untrusted{Path: path, Owner: name(owner), Why: "other users (" + name(sid) + ") can write it"}
	}
	return nil
}

// checkParent asks nothing of the folders above a path on Windows: a
// folder's DACL, inherited by what is made in it, decides who can write
// there, and checkLeaf reads it on the path itself.
func checkParent(string) error { return nil }

func security(path string) (owner *windows.SID, dacl *windows.ACL, err error) {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return nil, nil, fmt.Errorf("checking who owns %s: %w", path, err)
	}
	owner, _, err = sd.Owner()
	if err != nil {
		return nil, nil, fmt.Errorf("checking who owns %s: %w", path, err)
	}
	dacl, _, err = sd.DACL()
	if err != nil {
		return nil, nil, fmt.Errorf("checking who can write %s: %w", path, err)
	}
	return owner, dacl, nil
}

// broadWrite is the first broad group that dacl lets write, if any; a
// missing DACL lets everyone.
func broadWrite(dacl *windows.ACL) (*windows.SID, bool) {
	if dacl == nil {
		everyone, _ := windows.StringToSid("S-1-1-0")
		return everyone, true
	}
	for i := uint32(0); i < uint32(dacl.AceCount); i++ {
		var ace *windows.ACCESS_ALLOWED_ACE
		if windows.GetAce(dacl, i, &ace) != nil || ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE {
			continue
		}
		if ace.Mask&writeMask == 0 {
			continue
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart)) // the SID is laid out in place from SidStart
		if isAny(sid, broadSIDs) {
			return sid, true
		}
	}
	return nil, false
}

func mine(sid *windows.SID) bool {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	return err == nil && sid != nil && sid.Equals(u.User.Sid)
}

func isAny(sid *windows.SID, list []string) bool {
	for _, s := range list {
		if w, err := windows.StringToSid(s); err == nil && sid != nil && sid.Equals(w) {
			return true
		}
	}
	return false
}

func name(sid *windows.SID) string {
	if sid == nil {
		return "nobody"
	}
	if acct, dom, _, err := sid.LookupAccount(""); err == nil {
		if dom != "" {
			return dom + `\` + acct
		}
		return acct
	}
	return sid.String()
}
