/* backend_cpu.c - the host backend's device, memory, stream, event and module calls. */
#define _POSIX_C_SOURCE 200809L
#if defined(__linux__)
#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE) */
#endif

#include "cpu_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#ifdef DUET_HAVE_OPENMP
#include <omp.h>
#endif

/* Buffers, host allocations and packing panels start on a cache line (and an AVX-512 vector). */
#define CPU_ALIGN ((size_t)64)
/* Allocations of CPU_HUGE_MIN bytes or more start on a 2 MiB boundary and ask Linux for
 * transparent huge pages (where THP is "madvise", the usual default, nothing else gets them):
 * a transpose or a gemm reads one operand down its columns, a page per row with 4 KiB pages,
 * and a TLB miss per line then costs more than the line. */
#define CPU_HUGE_ALIGN ((size_t)2 << 20)
#define CPU_HUGE_MIN   ((size_t)4 << 20)

/* ---- shared helpers ------------------------------------------------------------------------ */

int cpu_threads_for(int64_t work)
{
#ifdef DUET_HAVE_OPENMP
    if (work < 2 * CPU_PARALLEL_MIN_WORK) return 1;
    int64_t most = work / CPU_PARALLEL_MIN_WORK;
    int nt = omp_get_max_threads();
    if (nt < 1) nt = 1;
    return most < nt ? (int)most : nt;
#else
    (void)work;
    return 1;
#endif /* DUET_HAVE_OPENMP */
}

void cpu_fill_info(duet_launch_info *info, const char *op, const char *suffix, const dt_plan *plan)
{
    if (!info) return;
    char name[64];
    snprintf(name, sizeof name, "cpu_%s_%s_%s", op, duet_algorithm_name(plan->algo), suffix);
    /* AUTO reports itself, as on the GPU backends: the packed host kernels are no seed
     * algorithm, and their name says which ran. */
    dt_fill_info(info, name, plan, 1);
}

/* grid * block along one axis; at most 2^32 * 2^32, so it is computed unsigned and capped. */
static int64_t grid_axis(uint32_t grid, uint32_t block)
{
    uint64_t t = (uint64_t)grid * (uint64_t)block;
    return t > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)t;
}

duet_status cpu_grid_threads(const dt_plan *plan, const char *func, int64_t *tx, int64_t *ty,
                             int64_t *tz)
{
    const duet_launch_config *c = &plan->cfg;
    *tx = grid_axis(c->grid.x, c->block.x);
    *ty = grid_axis(c->grid.y, c->block.y);
    *tz = grid_axis(c->grid.z, c->block.z);
    if (*tx == 0 || *ty == 0 || *tz == 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "grid-stride launch of %ux%ux%u blocks of %ux%ux%u threads is empty",
                       c->grid.x, c->grid.y, c->grid.z, c->block.x, c->block.y, c->block.z);
    return DUET_SUCCESS;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

void cpu_walk(int64_t batch, int64_t rows, int64_t cols, int64_t tz, int64_t ty, int64_t tx,
              int64_t work_per_elem, cpu_row_fn fn, void *arg)
{
    /* A wave wider than the data is one wave; clamping also keeps b0 + tz from overflowing. */
    tz = min64(tz, batch);
    ty = min64(ty, rows);
    tx = min64(tx, cols);
    for (int64_t b0 = 0; b0 < batch; b0 += tz) {
        const int64_t nb = min64(tz, batch - b0);
        for (int64_t i0 = 0; i0 < rows; i0 += ty) {
            const int64_t ni = min64(ty, rows - i0);
            for (int64_t j0 = 0; j0 < cols; j0 += tx) {
                const int64_t j1 = min64(j0 + tx, cols);
                const int64_t wave_rows = nb * ni;
                const int nt = cpu_threads_for(wave_rows * (j1 - j0) * work_per_elem);
                (void)nt;
                CPU_PARALLEL_FOR(r, wave_rows, fn(arg, b0 + r / ni, i0 + r % ni, j0, j1););
            }
        }
    }
}

int cpu_to_u32(double v, uint32_t *out)
{
    if (!(v >= -2147483648.0 && v <= 2147483647.0)) return 0; /* NaN fails here too */
    const int32_t i = (int32_t)v;
    if ((double)i != v) return 0;
    *out = (uint32_t)i;
    return 1;
}

/* ---- devices ------------------------------------------------------------------------------ */

const char *be_name(void) { return "cpu"; }

duet_status be_device_count(int *count)
{
    *count = 1;
    return DUET_SUCCESS;
}

/* The "model name" line of /proc/cpuinfo (Linux on x86); false where there is none. */
static int read_cpu_model(char *name, size_t size)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return 0;
    char line[512];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        const char *v = strchr(line, ':');
        if (!v) continue;
        ++v;
        while (*v == ' ' || *v == '\t') ++v;
        size_t len = strcspn(v, "\r\n");
        while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t')) --len;
        if (len == 0) continue;
        snprintf(name, size, "%.*s", (int)len, v);
        found = 1;
    }
    fclose(f);
    return found;
}

/* Physical memory in bytes, 0 when the system does not say. */
static size_t physical_memory(void)
{
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
    long pages = sysconf(_SC_PHYS_PAGES);
    long page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0 && (unsigned long)pages <= SIZE_MAX / (unsigned long)page)
        return (size_t)pages * (size_t)page;
#endif
    return 0;
}

duet_status be_device_props(int device, duet_device_props *props)
{
    if (device != 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, "duet_device_get_props",
                       "device %d does not exist (the cpu backend has device 0 only)", device);
    memset(props, 0, sizeof *props);
    if (!read_cpu_model(props->name, sizeof props->name))
        snprintf(props->name, sizeof props->name, "host CPU");
    snprintf(props->arch, sizeof props->arch, "host");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    props->compute_units = cores > 0 && cores < 1L << 30 ? (int)cores : 1;
    /* The host has no launch limits of its own. It validates launch configurations against
     * a typical GPU's limits instead, so that code which passes on the cpu backend also
     * launches on a GPU rather than failing there first. */
    props->warp_size = 32;
    props->max_threads_per_block = 1024;
    props->max_block_dims[0] = 1024;
    props->max_block_dims[1] = 1024;
    props->max_block_dims[2] = 64;
    props->max_grid_dims[0] = 2147483647;
    props->max_grid_dims[1] = 65535;
    props->max_grid_dims[2] = 65535;
    props->shared_mem_per_block = 49152;
    props->shared_mem_per_block_optin = 49152;
    props->global_mem_bytes = physical_memory();
    props->capability_major = 0;
    props->capability_minor = 0;
    return DUET_SUCCESS;
}

/* ---- contexts ----------------------------------------------------------------------------- */

/* The cpu backend keeps no per-context state: the record of host ranges that makes misuse of
 * host memory fail as on a GPU lives in src/common/host.c, shared by every backend. */
duet_status be_context_create(int device, void **ctx)
{
    *ctx = NULL;
    if (device != 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, "duet_context_create",
                       "device %d does not exist (the cpu backend has device 0 only)", device);
    /* Any non-NULL value: the cpu backend needs no per-context state. */
    static char cpu_context_tag;
    *ctx = &cpu_context_tag;
    return DUET_SUCCESS;
}

void be_context_destroy(void *ctx) { (void)ctx; }

/* ---- memory ------------------------------------------------------------------------------- */

/* 64-byte aligned host memory. Requests beyond physical memory fail at once, as a GPU fails
 * an allocation beyond its memory, rather than succeeding lazily and failing at first touch. */
static duet_status cpu_alloc(size_t bytes, void **ptr, const char *func)
{
    *ptr = NULL;
    const size_t phys = physical_memory();
    if (bytes > SIZE_MAX - (CPU_ALIGN - 1) || (phys != 0 && bytes > phys))
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, func,
                       "cannot allocate %zu bytes: the host has %zu bytes of memory", bytes, phys);
    /* C11 aligned_alloc wants a size that is a multiple of the alignment. */
    const size_t align = bytes >= CPU_HUGE_MIN && bytes <= SIZE_MAX - CPU_HUGE_ALIGN
                             ? CPU_HUGE_ALIGN
                             : CPU_ALIGN;
    const size_t rounded = (bytes + align - 1) / align * align;
    void *p = aligned_alloc(align, rounded == 0 ? align : rounded);
    if (!p)
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, func,
                       "cannot allocate %zu bytes: aligned_alloc(%zu, %zu) failed", bytes, align,
                       rounded == 0 ? align : rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (align == CPU_HUGE_ALIGN) (void)madvise(p, rounded, MADV_HUGEPAGE); /* a hint only */
#endif
    *ptr = p;
    return DUET_SUCCESS;
}

duet_status be_malloc(void *ctx, size_t bytes, void **ptr)
{
    (void)ctx;
    return cpu_alloc(bytes, ptr, "duet_buffer_create");
}

void be_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

/* Host memory needs no pinning: the common layer (src/common/host.c) has checked every call
 * against its record of host ranges, so these only allocate and free. */
duet_status be_host_alloc(void *ctx, size_t bytes, void **ptr)
{
    (void)ctx;
    return cpu_alloc(bytes, ptr, "duet_host_alloc");
}

duet_status be_host_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
    return DUET_SUCCESS;
}

duet_status be_host_register(void *ctx, void *ptr, size_t bytes)
{
    (void)ctx;
    (void)ptr;
    (void)bytes;
    return DUET_SUCCESS;
}

duet_status be_host_unregister(void *ctx, void *ptr)
{
    (void)ctx;
    (void)ptr;
    return DUET_SUCCESS;
}

/* ---- streams ------------------------------------------------------------------------------ */

/* Work runs on the calling thread when it is queued, so every stream is trivially in order,
 * is complete whenever the host looks at it, and the streams of different host threads run
 * concurrently. A stream only needs to be a distinct object. */
typedef struct cpu_stream {
    int unused;
} cpu_stream;

duet_status be_stream_create(void *ctx, void **stream)
{
    (void)ctx;
    *stream = calloc(1, sizeof(cpu_stream));
    if (!*stream)
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, "duet_stream_create",
                       "cannot allocate a cpu stream: calloc failed");
    return DUET_SUCCESS;
}

void be_stream_destroy(void *ctx, void *stream)
{
    (void)ctx;
    free(stream);
}

duet_status be_stream_synchronize(void *ctx, void *stream)
{
    (void)ctx;
    (void)stream;
    return DUET_SUCCESS;
}

duet_status be_stream_is_capturing(void *ctx, void *stream, int *capturing, const char *func)
{
    (void)ctx;
    (void)stream;
    (void)func;
    *capturing = 0; /* no graphs on the host */
    return DUET_SUCCESS;
}

/* ---- foreign objects ---------------------------------------------------------------------- */

/* Host memory cannot be validated without touching it (which a bad pointer would crash on):
 * the caller's promise is all there is. */
duet_status be_pointer_check(void *ctx, const void *ptr, size_t bytes, const char *func)
{
    (void)ctx;
    (void)ptr;
    (void)bytes;
    (void)func;
    return DUET_SUCCESS;
}

/* Work runs on the calling thread, so the only "native stream" there is, is the host thread
 * itself, named NULL; its backend stream is NULL too (cpu streams are never dereferenced). */
duet_status be_stream_wrap(void *ctx, void *native, void **stream, const char *func)
{
    (void)ctx;
    *stream = NULL;
    if (native)
        return dt_fail(DUET_ERROR_UNSUPPORTED, func,
                       "native (%p) is not NULL: the cpu backend runs work on the calling thread "
                       "and has no foreign streams to wrap (pass NULL)",
                       native);
    return DUET_SUCCESS;
}

duet_status be_event_wrap(void *ctx, void *native, void **event, const char *func)
{
    (void)ctx;
    (void)native;
    *event = NULL;
    return dt_fail(DUET_ERROR_UNSUPPORTED, func,
                   "the cpu backend's events are duet's own host timestamps; there are no "
                   "foreign events to wrap");
}

duet_status be_memcpy(void *ctx, void *stream, void *dst, const void *src, size_t bytes,
                      be_copy_kind kind)
{
    (void)ctx;
    (void)stream;
    (void)kind;
    memmove(dst, src, bytes);
    return DUET_SUCCESS;
}

duet_status be_memset(void *ctx, void *stream, void *dst, int value, size_t bytes)
{
    (void)ctx;
    (void)stream;
    memset(dst, value, bytes);
    return DUET_SUCCESS;
}

duet_status be_memcpy2d(void *ctx, void *stream, void *dst, size_t dpitch, const void *src,
                        size_t spitch, size_t width, size_t height, be_copy_kind kind,
                        const char *func)
{
    (void)ctx;
    (void)stream;
    (void)kind;
    (void)func;
    for (size_t i = 0; i < height; i++)
        memmove((char *)dst + i * dpitch, (const char *)src + i * spitch, width);
    return DUET_SUCCESS;
}

/* Every context's memory is host memory: a peer copy is a plain one, done when queued. */
duet_status be_memcpy_peer(void *dst_ctx, void *stream, void *dst, void *src_ctx,
                           const void *src, size_t bytes)
{
    (void)dst_ctx;
    (void)stream;
    (void)src_ctx;
    memmove(dst, src, bytes);
    return DUET_SUCCESS;
}

/* Recorded work has completed by the time the event is recorded: nothing to wait for. */
duet_status be_stream_wait_event(void *ctx, void *stream, void *event_ctx, void *event)
{
    (void)ctx;
    (void)stream;
    (void)event_ctx;
    (void)event;
    return DUET_SUCCESS;
}

/* ---- events ------------------------------------------------------------------------------- */

/* An event is the host's monotonic clock at record time; since queued work has finished by
 * then, two events bracket exactly the work queued between them. */
typedef struct cpu_event {
    double ms;
    int recorded;
} cpu_event;

static double monotonic_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

duet_status be_event_create(void *ctx, void **event)
{
    (void)ctx;
    *event = calloc(1, sizeof(cpu_event));
    if (!*event)
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, "duet_event_create",
                       "cannot allocate a cpu event: calloc failed");
    return DUET_SUCCESS;
}

void be_event_destroy(void *ctx, void *event)
{
    (void)ctx;
    free(event);
}

duet_status be_event_record(void *ctx, void *event, void *stream)
{
    (void)ctx;
    (void)stream;
    cpu_event *e = event;
    e->ms = monotonic_ms();
    e->recorded = 1;
    return DUET_SUCCESS;
}

duet_status be_event_synchronize(void *ctx, void *event)
{
    (void)ctx;
    (void)event;
    return DUET_SUCCESS;
}

duet_status be_event_query(void *ctx, void *event)
{
    (void)ctx;
    (void)event;
    return DUET_SUCCESS;
}

duet_status be_event_elapsed_ms(void *ctx, void *start, void *stop, float *ms)
{
    (void)ctx;
    const cpu_event *a = start, *b = stop;
    if (!a->recorded || !b->recorded)
        return dt_fail(DUET_ERROR_NOT_READY, "duet_event_elapsed_ms",
                       "the %s event has not been recorded", a->recorded ? "stop" : "start");
    *ms = (float)(b->ms - a->ms);
    return DUET_SUCCESS;
}

/* ---- runtime compilation ------------------------------------------------------------------ */

duet_status be_module_create(dt_context *ctx, const char *source,
                             const duet_module_options *options, void **module, char **log)
{
    (void)ctx;
    (void)source;
    (void)options;
    if (module) *module = NULL;
    if (log) *log = NULL;
    return dt_fail(DUET_ERROR_UNSUPPORTED, "duet_module_create",
                   "runtime compilation needs the cuda or hip backend (this library was built "
                   "with cpu)");
}

void be_module_destroy(dt_context *ctx, void *module)
{
    (void)ctx;
    (void)module;
}

duet_status be_module_get_function(dt_context *ctx, void *module, const char *name, void **function)
{
    (void)ctx;
    (void)module;
    (void)name;
    if (function) *function = NULL;
    return dt_fail(DUET_ERROR_UNSUPPORTED, "duet_module_get_function",
                   "runtime-compiled kernels need the cuda or hip backend (this library was "
                   "built with cpu)");
}

duet_status be_launch(dt_context *ctx, void *stream, void *function, const duet_launch_config *cfg,
                      const be_arg *args, int num_args)
{
    (void)ctx;
    (void)stream;
    (void)function;
    (void)cfg;
    (void)args;
    (void)num_args;
    return dt_fail(DUET_ERROR_UNSUPPORTED, "duet_launch",
                   "launching runtime-compiled kernels needs the cuda or hip backend (this "
                   "library was built with cpu)");
}
