/*
 * A stand-in installer for the Windows end-to-end test under wine
 * (scripts/test-windows.sh builds it with mingw-w64 as pip.exe).
 *
 *   pip.exe install --prefix=ENV torch==VERSION
 *
 * Replaces the torch in ENV\Lib\site-packages with a CPU build of VERSION,
 * as pip does: the old torch-*.dist-info goes, torch-VERSION.dist-info is
 * written (INSTALLER says pip), torch\version.py is rewritten and the CUDA
 * libraries are removed from torch\lib. Then, like a pip still finishing
 * its work, it runs on until the file named by PIP_STOP exists (or for 2
 * minutes at most), so that the process can be caught in the act.
 */
#include <stdio.h>
#include <wchar.h>
#include <windows.h>

static int writeFile(const wchar_t *path, const char *text) {
    HANDLE f = CreateFileW(path, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
    if (f == INVALID_HANDLE_VALUE) {
        fwprintf(stderr, L"pip: writing %ls: error %lu\n", path, GetLastError());
        return 0;
    }
    DWORD written = 0;
    BOOL ok = WriteFile(f, text, (DWORD)strlen(text), &written, NULL);
    CloseHandle(f);
    return ok && written == strlen(text);
}

/* removeDistInfo deletes every torch-*.dist-info folder in site. */
static void removeDistInfo(const wchar_t *site) {
    wchar_t pattern[MAX_PATH], dir[MAX_PATH], file[MAX_PATH];
    swprintf(pattern, MAX_PATH, L"%ls\\torch-*.dist-info", site);
    WIN32_FIND_DATAW d;
    HANDLE h = FindFirstFileW(pattern, &d);
    if (h == INVALID_HANDLE_VALUE) return;
    do {
        swprintf(dir, MAX_PATH, L"%ls\\%ls", site, d.cFileName);
        const wchar_t *files[] = {L"METADATA", L"INSTALLER", L"RECORD", L"WHEEL", L"REQUESTED"};
        for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
            swprintf(file, MAX_PATH, L"%ls\\%ls", dir, files[i]);
            DeleteFileW(file);
        }
        RemoveDirectoryW(dir);
    } while (FindNextFileW(h, &d));
    FindClose(h);
}

int wmain(int argc, wchar_t **argv) {
    const wchar_t *env = NULL, *version = NULL;
    for (int i = 1; i < argc; i++) {
        if (wcsncmp(argv[i], L"--prefix=", 9) == 0) env = argv[i] + 9;
        if (wcsncmp(argv[i], L"torch==", 7) == 0) version = argv[i] + 7;
    }
    if (argc < 2 || wcscmp(argv[1], L"install") != 0 || env == NULL || version == NULL) {
        fwprintf(stderr, L"usage: pip.exe install --prefix=ENV torch==VERSION\n");
        return 2;
    }
    wchar_t site[MAX_PATH], path[MAX_PATH];
    char text[512];
    swprintf(site, MAX_PATH, L"%ls\\Lib\\site-packages", env);

    removeDistInfo(site);
    swprintf(path, MAX_PATH, L"%ls\\torch-%ls.dist-info", site, version);
    if (!CreateDirectoryW(path, NULL)) {
        fwprintf(stderr, L"pip: creating %ls: error %lu\n", path, GetLastError());
        return 1;
    }
    snprintf(text, sizeof text, "Metadata-Version: 2.1\nName: torch\nVersion: %ls\n", version);
    swprintf(path, MAX_PATH, L"%ls\\torch-%ls.dist-info\\METADATA", site, version);
    if (!writeFile(path, text)) return 1;
    swprintf(path, MAX_PATH, L"%ls\\torch-%ls.dist-info\\INSTALLER", site, version);
    if (!writeFile(path, "pip\n")) return 1;
    swprintf(path, MAX_PATH, L"%ls\\torch-%ls.dist-info\\RECORD", site, version);
    if (!writeFile(path, "torch/__init__.py,,\n")) return 1;
    snprintf(text, sizeof text, "__version__ = '%ls'\ndebug = False\ncuda = None\nhip = None\n", version);
    swprintf(path, MAX_PATH, L"%ls\\torch\\version.py", site);
    if (!writeFile(path, text)) return 1;
    const wchar_t *cuda[] = {L"torch_cuda.dll", L"c10_cuda.dll"};
    for (size_t i = 0; i < sizeof cuda / sizeof cuda[0]; i++) {
        swprintf(path, MAX_PATH, L"%ls\\torch\\lib\\%ls", site, cuda[i]);
        DeleteFileW(path);
    }
    printf("installed\n");
    fflush(stdout);

    wchar_t stop[MAX_PATH];
    DWORD n = GetEnvironmentVariableW(L"PIP_STOP", stop, MAX_PATH);
    ULONGLONG deadline = GetTickCount64() + 2 * 60 * 1000;
    while (n > 0 && n < MAX_PATH && GetFileAttributesW(stop) == INVALID_FILE_ATTRIBUTES && GetTickCount64() < deadline) {
        Sleep(50);
    }
    return 0;
}
