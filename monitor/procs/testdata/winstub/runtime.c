/*
 * A stand-in ML runtime DLL for the Windows process tests under wine
 * (scripts/test-windows.sh builds it with mingw-w64). It does nothing: the
 * tests copy it under the names of the libraries GPU Canary looks for
 * (torch_cuda.dll, torch_cpu.dll, c10_cuda.dll, llama.dll, ggml-cuda.dll)
 * into a venv's Lib\site-packages\torch\lib, and a process that loads it
 * has a module of that name at that path, as one that imported torch has.
 */
#include <windows.h>

__declspec(dllexport) int gpucanary_stand_in_runtime(void) { return 1; }

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved) {
    (void)instance;
    (void)reason;
    (void)reserved;
    return TRUE;
}
