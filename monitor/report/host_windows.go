//go:build windows

package report

import (
	"strconv"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
)

// readHost reads Windows' version and build from the kernel
// (RtlGetVersion, which, unlike GetVersionEx, is not shimmed to an older
// version for programs without a manifest) and its edition, release and
// update revision from the registry.
func readHost() Host {
	v := windows.RtlGetVersion()
	cv := currentVersion{}
	if k, err := registry.OpenKey(registry.LOCAL_MACHINE, `SOFTWARE\Microsoft\Windows NT\CurrentVersion`, registry.QUERY_VALUE); err == nil {
		cv.product, _, _ = k.GetStringValue("ProductName")
		cv.display, _, _ = k.GetStringValue("DisplayVersion")
		if cv.display == "" {
			cv.display, _, _ = k.GetStringValue("ReleaseId") // before 20H2
		}
		if ubr, _, err := k.GetIntegerValue("UBR"); err == nil {
			cv.ubr = strconv.FormatUint(ubr, 10)
		}
		k.Close()
	}
	return windowsHost(v.MajorVersion, v.MinorVersion, v.BuildNumber, cv)
}
