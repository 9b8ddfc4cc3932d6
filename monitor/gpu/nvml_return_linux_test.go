//go:build linux && cgo

package gpu

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// TestReturnCodesMatchGoNVML: the shared backend's return codes are the
// C library's, as go-nvml has them.
func TestReturnCodesMatchGoNVML(t *testing.T) {
	pairs := map[nvmlReturn]nvml.Return{
		retSuccess: nvml.SUCCESS, retUninitialized: nvml.ERROR_UNINITIALIZED, retInvalidArgument: nvml.ERROR_INVALID_ARGUMENT,
		retNotSupported: nvml.ERROR_NOT_SUPPORTED, retNoPermission: nvml.ERROR_NO_PERMISSION, retNotFound: nvml.ERROR_NOT_FOUND,
		retInsufficientSize: nvml.ERROR_INSUFFICIENT_SIZE, retInsufficientPower: nvml.ERROR_INSUFFICIENT_POWER,
		retDriverNotLoaded: nvml.ERROR_DRIVER_NOT_LOADED, retTimeout: nvml.ERROR_TIMEOUT, retIRQIssue: nvml.ERROR_IRQ_ISSUE,
		retLibraryNotFound: nvml.ERROR_LIBRARY_NOT_FOUND, retFunctionNotFound: nvml.ERROR_FUNCTION_NOT_FOUND,
		retCorruptedInforom: nvml.ERROR_CORRUPTED_INFOROM, retGPUIsLost: nvml.ERROR_GPU_IS_LOST, retResetRequired: nvml.ERROR_RESET_REQUIRED,
		retOperatingSystem: nvml.ERROR_OPERATING_SYSTEM, retLibRMVersionMismatch: nvml.ERROR_LIB_RM_VERSION_MISMATCH,
		retInUse: nvml.ERROR_IN_USE, retMemory: nvml.ERROR_MEMORY, retNoData: nvml.ERROR_NO_DATA,
		retInsufficientResources: nvml.ERROR_INSUFFICIENT_RESOURCES, retUnknown: nvml.ERROR_UNKNOWN,
	}
	for ours, theirs := range pairs {
		if int32(ours) != int32(theirs) {
			t.Errorf("%s: ours %d, go-nvml %d", errorString(ours), ours, theirs)
		}
	}
	if len(pairs) != len(returnNames)+1 {
		t.Errorf("%d codes checked, %d named: check every named code", len(pairs), len(returnNames)+1)
	}
}
