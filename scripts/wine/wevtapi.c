/*
 * A stand-in for Windows' wevtapi.dll, for the end-to-end test under wine
 * (scripts/wine/training_e2e.sh): wine 8's event log API has no System
 * log to query. It answers the calls monitor/gpu/eventlog_windows.go
 * makes: EvtQuery on the channel "System" reads the file named by
 * WEVTSTUB_FILE, one event's XML a line (as EvtRender renders it), and
 * appends the XPath it was given to WEVTSTUB_LOG when that is set; EvtNext
 * hands out the events in order, EvtRender renders one as its XML, and
 * EvtClose frees a handle. The XPath filter is not applied: the reader
 * holds what it gets to it. Test harness only, never shipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>

#define EXPORT __declspec(dllexport)
#define EVT_RENDER_EVENT_XML 1
#define MAXEVENTS 64

struct handle {
    int kind; /* 1: a query's results, 2: an event */
    wchar_t *xml[MAXEVENTS];
    int n, next;
};

static int envvar(const char *name, char *buf, DWORD size) {
    DWORD n = GetEnvironmentVariableA(name, buf, size);
    return n > 0 && n < size;
}

EXPORT HANDLE WINAPI EvtQuery(HANDLE session, LPCWSTR path, LPCWSTR query, DWORD flags) {
    char f[MAX_PATH], line[4096];
    (void)session; (void)flags;
    if (envvar("WEVTSTUB_LOG", f, sizeof f)) {
        FILE *log = fopen(f, "a");
        if (log) {
            fprintf(log, "%ls %ls\n", path, query);
            fclose(log);
        }
    }
    if (path == NULL || wcscmp(path, L"System") != 0 || !envvar("WEVTSTUB_FILE", f, sizeof f)) {
        SetLastError(ERROR_EVT_CHANNEL_NOT_FOUND);
        return NULL;
    }
    struct handle *h = calloc(1, sizeof *h);
    h->kind = 1;
    FILE *in = fopen(f, "r");
    while (in && h->n < MAXEVENTS && fgets(line, sizeof line, in)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0]) continue;
        int len = MultiByteToWideChar(CP_UTF8, 0, line, -1, NULL, 0);
        h->xml[h->n] = malloc(len * sizeof(wchar_t));
        MultiByteToWideChar(CP_UTF8, 0, line, -1, h->xml[h->n], len);
        h->n++;
    }
    if (in) fclose(in);
    return h;
}

EXPORT BOOL WINAPI EvtNext(HANDLE results, DWORD size, HANDLE *events, DWORD timeout, DWORD flags, DWORD *returned) {
    struct handle *h = results;
    (void)timeout; (void)flags;
    *returned = 0;
    if (h == NULL || h->kind != 1) {
        SetLastError(ERROR_INVALID_HANDLE);
        return FALSE;
    }
    while (*returned < size && h->next < h->n) {
        struct handle *ev = calloc(1, sizeof *ev);
        ev->kind = 2;
        ev->xml[0] = _wcsdup(h->xml[h->next++]);
        ev->n = 1;
        events[(*returned)++] = ev;
    }
    if (*returned == 0) {
        SetLastError(ERROR_NO_MORE_ITEMS);
        return FALSE;
    }
    return TRUE;
}

EXPORT BOOL WINAPI EvtRender(HANDLE context, HANDLE fragment, DWORD flags, DWORD size, void *buf, DWORD *used, DWORD *props) {
    struct handle *ev = fragment;
    (void)context;
    if (ev == NULL || ev->kind != 2 || flags != EVT_RENDER_EVENT_XML) {
        SetLastError(ERROR_INVALID_PARAMETER);
        return FALSE;
    }
    DWORD need = (DWORD)((wcslen(ev->xml[0]) + 1) * sizeof(wchar_t));
    *used = need;
    *props = 0;
    if (buf == NULL || size < need) {
        SetLastError(ERROR_INSUFFICIENT_BUFFER);
        return FALSE;
    }
    memcpy(buf, ev->xml[0], need);
    return TRUE;
}

EXPORT BOOL WINAPI EvtClose(HANDLE handle) {
    struct handle *h = handle;
    if (h == NULL) {
        SetLastError(ERROR_INVALID_HANDLE);
        return FALSE;
    }
    for (int i = 0; i < h->n; i++) free(h->xml[i]);
    free(h);
    return TRUE;
}
