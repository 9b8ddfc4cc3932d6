/*
 * A stand-in ML job for the Windows end-to-end test under wine
 * (scripts/test-windows.sh builds it with mingw-w64 and copies it into a
 * venv as Scripts\python.exe).
 *
 *   python.exe [--sleep] train.py DLL...
 *
 * Loads each DLL, as Python loads torch's from
 * Lib\site-packages\torch\lib, prints "ready pid=N" (its Windows PID),
 * then keeps one core busy (or, with --sleep, sleeps) until the file named
 * by WORKLOAD_STOP exists, or for 5 minutes at most, and exits with the
 * code WORKLOAD_EXIT gives (decimal or 0x hex, as 0xC0000409, a
 * fail-fast crash; 0 without it). Arguments that do not end in .dll (train.py)
 * are only there to look like a training command line.
 */
#include <stdio.h>
#include <wchar.h>
#include <windows.h>

static int stopped(const wchar_t *stop) {
    return stop != NULL && GetFileAttributesW(stop) != INVALID_FILE_ATTRIBUTES;
}

int wmain(int argc, wchar_t **argv) {
    int sleep = 0;
    for (int i = 1; i < argc; i++) {
        size_t n = wcslen(argv[i]);
        if (wcscmp(argv[i], L"--sleep") == 0) {
            sleep = 1;
        } else if (n > 4 && _wcsicmp(argv[i] + n - 4, L".dll") == 0) {
            if (LoadLibraryW(argv[i]) == NULL) {
                fwprintf(stderr, L"workload: loading %ls: error %lu\n", argv[i], GetLastError());
                return 1;
            }
        }
    }
    wchar_t stop[MAX_PATH];
    DWORD n = GetEnvironmentVariableW(L"WORKLOAD_STOP", stop, MAX_PATH);
    const wchar_t *stopFile = (n > 0 && n < MAX_PATH) ? stop : NULL;
    wchar_t code[32];
    DWORD m = GetEnvironmentVariableW(L"WORKLOAD_EXIT", code, 32);
    UINT exitCode = (m > 0 && m < 32) ? (UINT)wcstoul(code, NULL, 0) : 0;
    printf("ready pid=%lu\n", GetCurrentProcessId());
    fflush(stdout);
    ULONGLONG deadline = GetTickCount64() + 5 * 60 * 1000;
    volatile unsigned long long x = 0;
    while (!stopped(stopFile) && GetTickCount64() < deadline) {
        if (sleep) {
            Sleep(50);
            continue;
        }
        for (unsigned long long i = 0; i < 20000000ULL; i++) {
            x += i;
        }
    }
    fflush(stdout);
    ExitProcess(exitCode);
}
