/*
 * A stand-in for NVIDIA's nvml.dll, for the Windows GPU backend's tests
 * under wine (scripts/test-windows.sh builds it with mingw-w64), and, built
 * as a Linux shared library, for the benchmark of the same snapshot through
 * go-nvml (BenchmarkSnapshotNVMLStub). It exports
 * the functions the backend resolves, under the names real drivers export
 * them, and answers from a scenario named by NVMLSTUB_SCENARIO, read at
 * nvmlInit:
 *
 *   a100          one A100 on a data-center (Linux-like) driver
 *   a100-growing  the same, its compute list growing by two processes per
 *                 call (up to six), so a reader must ask again
 *   rtx4090-wddm  an RTX 4090 on a 566.x Game Ready driver: WDDM, so every
 *                 process's memory is NVML_VALUE_NOT_AVAILABLE, and no MIG,
 *                 MPS or per-process utilization
 *   rtx4090-full  the same RTX 4090 training with its memory full (all but
 *                 128 MiB in use) and one compute process: where a job
 *                 spills into system memory (VRAM_SPILL)
 *   fail          nvmlInit fails (driver not loaded); so does every other call
 *
 * Built with -DNVMLSTUB_OLD it is an old driver's nvml.dll: no _v3 symbols,
 * no _v2 process lists (only the v1 calls with the short struct), no MPS
 * list, no MIG mode, no nvmlSystemGetCudaDriverVersion_v2.
 *
 * NVMLSTUB_PID, when set, is the PIDs of the scenario's compute processes
 * (comma-separated, memory not available), so an end-to-end test lists
 * processes that run.
 *
 * With NVMLSTUB_LOG set to a file, each call appends its symbol's name, so
 * a test can see which versions were called and that nothing was called
 * after a failed nvmlInit.
 *
 * The structs are written from the ABI nvml.h documents; the values are
 * what such a machine shows.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <windows.h>
#define EXPORT __declspec(dllexport)
/* env reads a variable from the process's environment (getenv would read
   the C runtime's copy, taken when it started, before a test set it). */
static int env(const char *name, char *buf, unsigned size) {
    DWORD n = GetEnvironmentVariableA(name, buf, size);
    return n > 0 && n < size;
}
#else
#define EXPORT __attribute__((visibility("default")))
static int env(const char *name, char *buf, unsigned size) {
    const char *v = getenv(name);
    if (!v || !*v || strlen(v) >= size) return 0;
    strcpy(buf, v);
    return 1;
}
#endif

typedef int nvml_ret;
enum {
    SUCCESS = 0, UNINITIALIZED = 1, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3,
    NOT_FOUND = 6, INSUFFICIENT_SIZE = 7, DRIVER_NOT_LOADED = 9, UNKNOWN = 999
};
#define VALUE_NOT_AVAILABLE 0xFFFFFFFFFFFFFFFFULL
#define NO_INSTANCE 0xFFFFFFFFu
#define GiB (1024ULL * 1024 * 1024)
#define MAXPROCS 8

struct pci_info {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};
struct memory { unsigned long long total, free, used; };
struct utilization { unsigned gpu, memory; };
struct process_v1 { unsigned pid; unsigned long long used; };
struct process_v2 { unsigned pid; unsigned long long used; unsigned gpu_instance, compute_instance; };
struct sample { unsigned pid; unsigned long long timestamp; unsigned sm, mem, enc, dec; };

struct proc { unsigned pid; unsigned long long used; };
struct gpu {
    const char *name, *uuid, *bus_id, *bus_id_legacy;
    unsigned bus;
    int major, minor;
    unsigned long long total, used;
    unsigned util_gpu, util_mem, temperature, power_mw, limit_mw;
    int mig_supported, mps_supported, samples_supported;
    struct proc compute[MAXPROCS]; int ncompute;
    struct proc graphics[MAXPROCS]; int ngraphics;
    struct sample samples[MAXPROCS]; int nsamples;
};
struct scenario {
    const char *name;
    nvml_ret init;
    const char *driver;
    int cuda;
    int growing;
    int ngpus;
    struct gpu gpus[1];
};

static const struct scenario scenarios[] = {
    {"a100", SUCCESS, "550.54.15", 12040, 0, 1, {{
        "NVIDIA A100-SXM4-40GB", "GPU-5b9f1c3e-7d2a-4e6b-9a41-0c8d2f6e1a77", "00000000:07:00.0", "0000:07:00.0", 7,
        8, 0, 40 * GiB, 3 * GiB, 87, 40, 61, 250500, 400000, 1, 1, 1,
        {{4242, 2 * GiB}}, 1,
        {{0, 0}}, 0,
        {{4242, 1000, 91, 30, 0, 0}, {4242, 900, 10, 9, 0, 0}}, 2}}},
    {"a100-growing", SUCCESS, "550.54.15", 12040, 1, 1, {{
        "NVIDIA A100-SXM4-40GB", "GPU-5b9f1c3e-7d2a-4e6b-9a41-0c8d2f6e1a77", "00000000:07:00.0", "0000:07:00.0", 7,
        8, 0, 40 * GiB, 3 * GiB, 87, 40, 61, 250500, 400000, 1, 1, 1,
        {{4242, 2 * GiB}, {4243, 1 * GiB}, {4244, 1 * GiB}, {4245, 1 * GiB}, {4246, 1 * GiB}, {4247, 1 * GiB}}, 6,
        {{0, 0}}, 0,
        {{0, 0, 0, 0, 0, 0}}, 0}}},
    {"rtx4090-wddm", SUCCESS, "566.36", 12070, 0, 1, {{
        "NVIDIA GeForce RTX 4090", "GPU-0e6f3b2a-91c4-4d7e-8b15-3a9c7d2e4f60", "00000000:01:00.0", "0000:01:00.0", 1,
        8, 9, 25757220864ULL, 6 * GiB, 35, 20, 54, 120000, 450000, 0, 0, 0,
        {{5120, VALUE_NOT_AVAILABLE}}, 1,
        {{5120, VALUE_NOT_AVAILABLE}, {812, VALUE_NOT_AVAILABLE}}, 2,
        {{0, 0, 0, 0, 0, 0}}, 0}}},
    {"rtx4090-full", SUCCESS, "566.36", 12070, 0, 1, {{
        "NVIDIA GeForce RTX 4090", "GPU-0e6f3b2a-91c4-4d7e-8b15-3a9c7d2e4f60", "00000000:01:00.0", "0000:01:00.0", 1,
        8, 9, 25757220864ULL, 25757220864ULL - 128ULL * 1024 * 1024, 97, 60, 71, 430000, 450000, 0, 0, 0,
        {{5120, VALUE_NOT_AVAILABLE}}, 1,
        {{0, 0}}, 0,
        {{0, 0, 0, 0, 0, 0}}, 0}}},
    {"fail", DRIVER_NOT_LOADED, "", 0, 0, 0, {{0}}},
};

static const struct scenario *cur; /* set by a successful nvmlInit */
static struct scenario live;       /* the scenario cur points at, NVMLSTUB_PID applied */
static int growth;                 /* compute list calls so far (a100-growing) */

static void trace(const char *symbol) {
    char path[1024];
    if (!env("NVMLSTUB_LOG", path, sizeof path)) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    fprintf(f, "%s\n", symbol);
    fclose(f);
}

static nvml_ret init(const char *symbol) {
    char name[64];
    trace(symbol);
    if (!env("NVMLSTUB_SCENARIO", name, sizeof name)) strcpy(name, "a100");
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        if (strcmp(scenarios[i].name, name) == 0) {
            if (scenarios[i].init != SUCCESS) return scenarios[i].init;
            live = scenarios[i];
            char pids[128];
            if (env("NVMLSTUB_PID", pids, sizeof pids)) {
                struct gpu *g0 = &live.gpus[0];
                char *p = pids;
                g0->ncompute = 0;
                while (*p && g0->ncompute < MAXPROCS) {
                    g0->compute[g0->ncompute].pid = (unsigned)strtoul(p, &p, 10);
                    g0->compute[g0->ncompute++].used = VALUE_NOT_AVAILABLE;
                    if (*p == ',') p++;
                    else break;
                }
            }
            cur = &live;
            growth = 0;
            return SUCCESS;
        }
    }
    return UNKNOWN;
}

/* gpu checks a device handle, which points into the scenario. */
static const struct gpu *gpu(const void *handle) {
    if (!cur) return NULL;
    for (int i = 0; i < cur->ngpus; i++)
        if (handle == &cur->gpus[i]) return &cur->gpus[i];
    return NULL;
}

#define ENTER(sym) trace(sym); if (!cur) return UNINITIALIZED
#define DEVICE(sym) ENTER(sym); const struct gpu *g = gpu(dev); if (!g) return INVALID_ARGUMENT

static nvml_ret copy_string(const char *s, char *buf, unsigned len) {
    if (!buf) return INVALID_ARGUMENT;
    if (strlen(s) + 1 > len) return INSUFFICIENT_SIZE;
    strcpy(buf, s);
    return SUCCESS;
}

EXPORT nvml_ret nvmlInit_v2(void) { return init("nvmlInit_v2"); }
EXPORT nvml_ret nvmlInit(void) { return init("nvmlInit"); }
EXPORT nvml_ret nvmlShutdown(void) { ENTER("nvmlShutdown"); cur = NULL; return SUCCESS; }

EXPORT nvml_ret nvmlSystemGetDriverVersion(char *buf, unsigned len) {
    ENTER("nvmlSystemGetDriverVersion");
    return copy_string(cur->driver, buf, len);
}
EXPORT nvml_ret nvmlSystemGetCudaDriverVersion(int *v) {
    ENTER("nvmlSystemGetCudaDriverVersion");
    *v = cur->cuda;
    return SUCCESS;
}
#ifndef NVMLSTUB_OLD
EXPORT nvml_ret nvmlSystemGetCudaDriverVersion_v2(int *v) {
    ENTER("nvmlSystemGetCudaDriverVersion_v2");
    *v = cur->cuda;
    return SUCCESS;
}
#endif

static nvml_ret count(const char *sym, unsigned *n) { ENTER(sym); *n = (unsigned)cur->ngpus; return SUCCESS; }
EXPORT nvml_ret nvmlDeviceGetCount_v2(unsigned *n) { return count("nvmlDeviceGetCount_v2", n); }
EXPORT nvml_ret nvmlDeviceGetCount(unsigned *n) { return count("nvmlDeviceGetCount", n); }

static nvml_ret handle(const char *sym, unsigned i, const void **dev) {
    ENTER(sym);
    if (i >= (unsigned)cur->ngpus) return INVALID_ARGUMENT;
    *dev = &cur->gpus[i];
    return SUCCESS;
}
EXPORT nvml_ret nvmlDeviceGetHandleByIndex_v2(unsigned i, const void **dev) { return handle("nvmlDeviceGetHandleByIndex_v2", i, dev); }
EXPORT nvml_ret nvmlDeviceGetHandleByIndex(unsigned i, const void **dev) { return handle("nvmlDeviceGetHandleByIndex", i, dev); }

/* pci fills the struct as the version's call does: v3 both bus ids, older
   ones only the legacy field (v1's struct ends before busId). */
static nvml_ret pci(const char *sym, const void *dev, struct pci_info *p, int version) {
    DEVICE(sym);
    memset(p, 0, version >= 2 ? sizeof *p : offsetof(struct pci_info, bus_id));
    strcpy(p->bus_id_legacy, g->bus_id_legacy);
    if (version >= 3) strcpy(p->bus_id, g->bus_id);
    p->bus = g->bus;
    p->pci_device_id = 0x20b010de;
    return SUCCESS;
}
#ifndef NVMLSTUB_OLD
EXPORT nvml_ret nvmlDeviceGetPciInfo_v3(const void *dev, struct pci_info *p) { return pci("nvmlDeviceGetPciInfo_v3", dev, p, 3); }
#endif
EXPORT nvml_ret nvmlDeviceGetPciInfo_v2(const void *dev, struct pci_info *p) { return pci("nvmlDeviceGetPciInfo_v2", dev, p, 2); }
EXPORT nvml_ret nvmlDeviceGetPciInfo(const void *dev, struct pci_info *p) { return pci("nvmlDeviceGetPciInfo", dev, p, 1); }

EXPORT nvml_ret nvmlDeviceGetName(const void *dev, char *buf, unsigned len) {
    DEVICE("nvmlDeviceGetName");
    return copy_string(g->name, buf, len);
}
EXPORT nvml_ret nvmlDeviceGetUUID(const void *dev, char *buf, unsigned len) {
    DEVICE("nvmlDeviceGetUUID");
    return copy_string(g->uuid, buf, len);
}
EXPORT nvml_ret nvmlDeviceGetCudaComputeCapability(const void *dev, int *major, int *minor) {
    DEVICE("nvmlDeviceGetCudaComputeCapability");
    *major = g->major;
    *minor = g->minor;
    return SUCCESS;
}
EXPORT nvml_ret nvmlDeviceGetMemoryInfo(const void *dev, struct memory *m) {
    DEVICE("nvmlDeviceGetMemoryInfo");
    m->total = g->total;
    m->used = g->used;
    m->free = g->total - g->used;
    return SUCCESS;
}
EXPORT nvml_ret nvmlDeviceGetUtilizationRates(const void *dev, struct utilization *u) {
    DEVICE("nvmlDeviceGetUtilizationRates");
    u->gpu = g->util_gpu;
    u->memory = g->util_mem;
    return SUCCESS;
}
EXPORT nvml_ret nvmlDeviceGetTemperature(const void *dev, int sensor, unsigned *t) {
    DEVICE("nvmlDeviceGetTemperature");
    if (sensor != 0) return INVALID_ARGUMENT;
    *t = g->temperature;
    return SUCCESS;
}
EXPORT nvml_ret nvmlDeviceGetPowerUsage(const void *dev, unsigned *mw) {
    DEVICE("nvmlDeviceGetPowerUsage");
    *mw = g->power_mw;
    return SUCCESS;
}
EXPORT nvml_ret nvmlDeviceGetEnforcedPowerLimit(const void *dev, unsigned *mw) {
    DEVICE("nvmlDeviceGetEnforcedPowerLimit");
    *mw = g->limit_mw;
    return SUCCESS;
}
#ifndef NVMLSTUB_OLD
EXPORT nvml_ret nvmlDeviceGetMigMode(const void *dev, unsigned *current, unsigned *pending) {
    DEVICE("nvmlDeviceGetMigMode");
    if (!g->mig_supported) return NOT_SUPPORTED;
    *current = *pending = 0;
    return SUCCESS;
}
#endif

/* list answers a process-list call: the count when there is no room, the
   entries in the struct of the call's version when there is. */
static nvml_ret list(const struct proc *ps, int n, unsigned *count, void *out, int version) {
    if (*count < (unsigned)n) {
        *count = (unsigned)n;
        return INSUFFICIENT_SIZE;
    }
    for (int i = 0; i < n; i++) {
        if (version == 1) {
            struct process_v1 *p = (struct process_v1 *)out + i;
            p->pid = ps[i].pid;
            p->used = ps[i].used;
        } else {
            struct process_v2 *p = (struct process_v2 *)out + i;
            p->pid = ps[i].pid;
            p->used = ps[i].used;
            p->gpu_instance = p->compute_instance = NO_INSTANCE;
        }
    }
    *count = (unsigned)n;
    return SUCCESS;
}

static nvml_ret compute(const char *sym, const void *dev, unsigned *count, void *out, int version) {
    DEVICE(sym);
    int n = g->ncompute;
    if (cur->growing) {
        n = 1 + 2 * growth++;
        if (n > g->ncompute) n = g->ncompute;
    }
    return list(g->compute, n, count, out, version);
}
static nvml_ret graphics(const char *sym, const void *dev, unsigned *count, void *out, int version) {
    DEVICE(sym);
    return list(g->graphics, g->ngraphics, count, out, version);
}
#ifndef NVMLSTUB_OLD
static nvml_ret mps(const char *sym, const void *dev, unsigned *count, void *out, int version) {
    DEVICE(sym);
    if (!g->mps_supported) return NOT_SUPPORTED;
    return list(NULL, 0, count, out, version);
}
EXPORT nvml_ret nvmlDeviceGetComputeRunningProcesses_v3(const void *dev, unsigned *c, void *o) { return compute("nvmlDeviceGetComputeRunningProcesses_v3", dev, c, o, 3); }
EXPORT nvml_ret nvmlDeviceGetComputeRunningProcesses_v2(const void *dev, unsigned *c, void *o) { return compute("nvmlDeviceGetComputeRunningProcesses_v2", dev, c, o, 2); }
EXPORT nvml_ret nvmlDeviceGetGraphicsRunningProcesses_v3(const void *dev, unsigned *c, void *o) { return graphics("nvmlDeviceGetGraphicsRunningProcesses_v3", dev, c, o, 3); }
EXPORT nvml_ret nvmlDeviceGetGraphicsRunningProcesses_v2(const void *dev, unsigned *c, void *o) { return graphics("nvmlDeviceGetGraphicsRunningProcesses_v2", dev, c, o, 2); }
EXPORT nvml_ret nvmlDeviceGetMPSComputeRunningProcesses_v3(const void *dev, unsigned *c, void *o) { return mps("nvmlDeviceGetMPSComputeRunningProcesses_v3", dev, c, o, 3); }
EXPORT nvml_ret nvmlDeviceGetMPSComputeRunningProcesses_v2(const void *dev, unsigned *c, void *o) { return mps("nvmlDeviceGetMPSComputeRunningProcesses_v2", dev, c, o, 2); }
EXPORT nvml_ret nvmlDeviceGetMPSComputeRunningProcesses(const void *dev, unsigned *c, void *o) { return mps("nvmlDeviceGetMPSComputeRunningProcesses", dev, c, o, 1); }
#endif
EXPORT nvml_ret nvmlDeviceGetComputeRunningProcesses(const void *dev, unsigned *c, void *o) { return compute("nvmlDeviceGetComputeRunningProcesses", dev, c, o, 1); }
EXPORT nvml_ret nvmlDeviceGetGraphicsRunningProcesses(const void *dev, unsigned *c, void *o) { return graphics("nvmlDeviceGetGraphicsRunningProcesses", dev, c, o, 1); }

/* nvmlDeviceGetProcessUtilization returns the samples newer than lastSeen;
   with no buffer, their count. */
EXPORT nvml_ret nvmlDeviceGetProcessUtilization(const void *dev, struct sample *out, unsigned *count, unsigned long long last_seen) {
    DEVICE("nvmlDeviceGetProcessUtilization");
    if (!g->samples_supported) return NOT_SUPPORTED;
    unsigned n = 0;
    for (int i = 0; i < g->nsamples; i++)
        if (g->samples[i].timestamp > last_seen) n++;
    if (n == 0) return NOT_FOUND;
    if (!out || *count < n) {
        *count = n;
        return INSUFFICIENT_SIZE;
    }
    n = 0;
    for (int i = 0; i < g->nsamples; i++)
        if (g->samples[i].timestamp > last_seen) out[n++] = g->samples[i];
    *count = n;
    return SUCCESS;
}

/* Health (GPU Canary's GPU health codes). A data-center card (one that
   supports MIG here: the A100) answers every call, at its power cap on a
   full Gen4 x16 link with clean memory; the RTX 4090 idles (its link at
   Gen1, as power saving leaves it) and answers NOT_SUPPORTED for ECC, the
   margin and the counters, as a GeForce does for some of them. An old
   driver has the clock-event reasons under their old name only. */
#define ARGUMENT_VERSION_MISMATCH 25
struct field_value {
    unsigned field_id, scope_id;
    long long timestamp, latency_usec;
    unsigned value_type; /* 1 unsigned int, 3 unsigned long long */
    nvml_ret ret;
    unsigned char value[8];
};
struct margin_temperature { unsigned version; int margin; };

static nvml_ret reasons(const char *sym, const void *dev, unsigned long long *r) {
    DEVICE(sym);
    *r = g->mig_supported ? 0x4 /* SW power cap */ : 0x1 /* GPU idle */;
    return SUCCESS;
}
#ifndef NVMLSTUB_OLD
EXPORT nvml_ret nvmlDeviceGetCurrentClocksEventReasons(const void *dev, unsigned long long *r) { return reasons("nvmlDeviceGetCurrentClocksEventReasons", dev, r); }
#endif
EXPORT nvml_ret nvmlDeviceGetCurrentClocksThrottleReasons(const void *dev, unsigned long long *r) { return reasons("nvmlDeviceGetCurrentClocksThrottleReasons", dev, r); }

static void set_value(struct field_value *v, unsigned type, unsigned long long n) {
    v->value_type = type;
    v->ret = SUCCESS;
    memset(v->value, 0, sizeof v->value);
    for (int i = 0; i < 8; i++) v->value[i] = (unsigned char)(n >> (8 * i));
}

EXPORT nvml_ret nvmlDeviceGetFieldValues(const void *dev, int n, struct field_value *values) {
    DEVICE("nvmlDeviceGetFieldValues");
    if (n < 0 || (n > 0 && !values)) return INVALID_ARGUMENT;
    for (int i = 0; i < n; i++) {
        struct field_value *v = &values[i];
        v->ret = NOT_SUPPORTED;
        if (!g->mig_supported) continue;
        switch (v->field_id) {
        case 269: set_value(v, 3, 1500000000ULL); break; /* SW thermal, ns */
        case 270: set_value(v, 3, 0); break;             /* HW thermal, ns */
        case 94: set_value(v, 1, 2); break;              /* PCIe replays */
        }
    }
    return SUCCESS;
}

EXPORT nvml_ret nvmlDeviceGetMarginTemperature(const void *dev, struct margin_temperature *m) {
    DEVICE("nvmlDeviceGetMarginTemperature");
    if (!g->mig_supported) return NOT_SUPPORTED;
    if (m->version != (sizeof *m | 1u << 24)) return ARGUMENT_VERSION_MISMATCH;
    m->margin = 24;
    return SUCCESS;
}

#define LINK(sym, expr) EXPORT nvml_ret sym(const void *dev, unsigned *v) { DEVICE(#sym); *v = (expr); return SUCCESS; }
LINK(nvmlDeviceGetCurrPcieLinkGeneration, g->mig_supported ? 4 : 1)
LINK(nvmlDeviceGetCurrPcieLinkWidth, 16)
LINK(nvmlDeviceGetMaxPcieLinkGeneration, 4)
LINK(nvmlDeviceGetMaxPcieLinkWidth, 16)
LINK(nvmlDeviceGetGpuMaxPcieLinkGeneration, 4)

EXPORT nvml_ret nvmlDeviceGetTotalEccErrors(const void *dev, int type, int counter, unsigned long long *n) {
    DEVICE("nvmlDeviceGetTotalEccErrors");
    if (!g->mig_supported) return NOT_SUPPORTED;
    if (type != 1 || counter != 0) return INVALID_ARGUMENT; /* uncorrected, volatile */
    *n = 0;
    return SUCCESS;
}
EXPORT nvml_ret nvmlDeviceGetRetiredPagesPendingStatus(const void *dev, int *pending) {
    DEVICE("nvmlDeviceGetRetiredPagesPendingStatus");
    if (!g->mig_supported) return NOT_SUPPORTED;
    *pending = 0;
    return SUCCESS;
}
EXPORT nvml_ret nvmlDeviceGetRemappedRows(const void *dev, unsigned *corr, unsigned *unc, unsigned *pending, unsigned *failure) {
    DEVICE("nvmlDeviceGetRemappedRows");
    if (!g->mig_supported) return NOT_SUPPORTED;
    *corr = *unc = *pending = *failure = 0;
    return SUCCESS;
}
