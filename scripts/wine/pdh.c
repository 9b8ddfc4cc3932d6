/*
 * A stand-in for Windows' pdh.dll, for the end-to-end test under wine
 * (scripts/wine/training_e2e.sh), whose pdh.dll has no GPU counters. It
 * answers the calls monitor/gpu/pdh_windows.go makes, with the counters
 * "\GPU Process Memory(*)\Dedicated Usage" and "...\Shared Usage" read
 * from the file named by PDHSTUB_FILE at every collection, one instance
 * a line:
 *
 *   pid_5120_luid_0x00000000_0x0000D1B8_phys_0 DEDICATED SHARED STEP
 *
 * SHARED grows by STEP bytes at each collection after the first, as a
 * job's does while it spills into system memory. "\GPU Engine(*)\..." has
 * no instances. Without PDHSTUB_FILE, adding a counter fails as on a
 * system without them. Test harness only, never shipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>

#define EXPORT __declspec(dllexport)
#define PDH_MORE_DATA ((LONG)0x800007D2)
#define PDH_CSTATUS_NO_OBJECT ((LONG)0xC0000BB8)
#define PDH_INVALID_HANDLE ((LONG)0xC0000BBC)
#define PDH_FMT_LARGE 0x00000400
#define MAXROWS 16

typedef struct {
    wchar_t *name;
    DWORD status;
    union { LONG l; double d; LONGLONG ll; } value;
} item;

struct row { wchar_t name[128]; LONGLONG dedicated, shared, step; };
static struct row rows[MAXROWS];
static int nrows;
static LONGLONG collections;
static int query_open;

enum { COUNTER_DEDICATED = 1, COUNTER_SHARED, COUNTER_OTHER };

static int file(char *path, DWORD size) {
    DWORD n = GetEnvironmentVariableA("PDHSTUB_FILE", path, size);
    return n > 0 && n < size;
}

EXPORT LONG WINAPI PdhOpenQueryW(LPCWSTR source, DWORD_PTR user, HANDLE *query) {
    (void)source; (void)user;
    query_open = 1;
    *query = (HANDLE)(ULONG_PTR)0x51;
    return 0;
}

EXPORT LONG WINAPI PdhAddEnglishCounterW(HANDLE query, LPCWSTR path, DWORD_PTR user, HANDLE *counter) {
    char f[MAX_PATH];
    (void)user;
    if (query != (HANDLE)(ULONG_PTR)0x51 || !query_open) return PDH_INVALID_HANDLE;
    if (!file(f, sizeof f)) return PDH_CSTATUS_NO_OBJECT;
    if (wcsstr(path, L"\\GPU Process Memory(*)\\Dedicated Usage")) *counter = (HANDLE)COUNTER_DEDICATED;
    else if (wcsstr(path, L"\\GPU Process Memory(*)\\Shared Usage")) *counter = (HANDLE)COUNTER_SHARED;
    else if (wcsstr(path, L"\\GPU Engine(*)\\")) *counter = (HANDLE)COUNTER_OTHER;
    else return PDH_CSTATUS_NO_OBJECT;
    return 0;
}

EXPORT LONG WINAPI PdhCollectQueryData(HANDLE query) {
    char f[MAX_PATH], line[512], name[128];
    if (query != (HANDLE)(ULONG_PTR)0x51 || !query_open) return PDH_INVALID_HANDLE;
    nrows = 0;
    if (!file(f, sizeof f)) return PDH_CSTATUS_NO_OBJECT;
    FILE *in = fopen(f, "r");
    if (!in) return PDH_CSTATUS_NO_OBJECT;
    while (nrows < MAXROWS && fgets(line, sizeof line, in)) {
        struct row *r = &rows[nrows];
        if (sscanf(line, "%127s %lld %lld %lld", name, &r->dedicated, &r->shared, &r->step) != 4) continue;
        MultiByteToWideChar(CP_UTF8, 0, name, -1, r->name, 128);
        r->shared += r->step * collections;
        nrows++;
    }
    fclose(in);
    collections++;
    return 0;
}

EXPORT LONG WINAPI PdhGetFormattedCounterArrayW(HANDLE counter, DWORD format, DWORD *size, DWORD *count, item *items) {
    ULONG_PTR which = (ULONG_PTR)counter;
    if (which != COUNTER_DEDICATED && which != COUNTER_SHARED && which != COUNTER_OTHER) return PDH_INVALID_HANDLE;
    int n = which == COUNTER_OTHER ? 0 : nrows;
    DWORD need = (DWORD)(n * sizeof(item));
    for (int i = 0; i < n; i++) need += (DWORD)((wcslen(rows[i].name) + 1) * sizeof(wchar_t));
    if (n == 0) {
        *size = 0;
        *count = 0;
        return 0;
    }
    if (items == NULL || *size < need) {
        *size = need;
        *count = (DWORD)n;
        return PDH_MORE_DATA;
    }
    wchar_t *names = (wchar_t *)(items + n);
    for (int i = 0; i < n; i++) {
        LONGLONG v = which == COUNTER_DEDICATED ? rows[i].dedicated : rows[i].shared;
        wcscpy(names, rows[i].name);
        items[i].name = names;
        names += wcslen(rows[i].name) + 1;
        items[i].status = 0;
        if (format & PDH_FMT_LARGE) items[i].value.ll = v;
        else items[i].value.d = (double)v;
    }
    *size = need;
    *count = (DWORD)n;
    return 0;
}

EXPORT LONG WINAPI PdhCloseQuery(HANDLE query) {
    if (query != (HANDLE)(ULONG_PTR)0x51 || !query_open) return PDH_INVALID_HANDLE;
    query_open = 0;
    return 0;
}
