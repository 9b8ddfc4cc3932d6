/*
 * A stand-in bcryptprimitives.dll for running Go programs under wine 8
 * (scripts/test-windows.sh builds it with mingw-w64 into the throwaway
 * prefix's system32; it is never shipped). Go 1.22 and later import
 * ProcessPrng from bcryptprimitives.dll for random bytes; wine 8 does not
 * have it, so every Go program dies at start. This one fills the buffer
 * through advapi32's RtlGenRandom (SystemFunction036), which wine has.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG n = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, n)) return FALSE;
        data += n;
        length -= n;
    }
    return TRUE;
}
