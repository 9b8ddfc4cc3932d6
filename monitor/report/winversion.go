package report

import (
	"fmt"
	"strconv"
	"strings"
)

// currentVersion is what the registry says of this Windows.
type currentVersion struct {
	product, display, ubr string
}

// windowsHost words Windows' version: Windows 11 reports itself as 10.0
// with a build of 22000 or more, and its registry's ProductName still says
// "Windows 10", which is corrected here.
func windowsHost(major, minor, build uint32, cv currentVersion) Host {
	h := Host{Version: fmt.Sprintf("%d.%d", major, minor), Build: strconv.FormatUint(uint64(build), 10)}
	if cv.ubr != "" {
		h.Build += "." + cv.ubr
	}
	name := cv.product
	if name == "" {
		name = "Windows"
	}
	if major == 10 && build >= 22000 {
		name = strings.Replace(name, "Windows 10", "Windows 11", 1)
	}
	if cv.display != "" {
		name += " " + cv.display
	}
	h.System = name
	return h
}
