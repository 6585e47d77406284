/* copy_cpu.c - strided copies and transposes (dt_copy2d) and the elementwise ops on the host. */
#define _POSIX_C_SOURCE 200809L

#include "cpu_internal.h"

#include <stdio.h>
#include <string.h>

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---- copy2d -------------------------------------------------------------------------------- */

/* Elements move as unsigned integers of their size: bits are copied, never converted. */
#define COPY_ROW(BITS, U)                                                                          \
    static void copy_row_##BITS(const dt_copy2d *t, int64_t b, int64_t i, int64_t j0, int64_t j1)  \
    {                                                                                              \
        const U *in = (const U *)t->in.base + b * t->in.bs + i * t->in.rs;                         \
        U *out = (U *)t->out.base + b * t->out.bs + i * t->out.rs;                                 \
        const int64_t ics = t->in.cs, ocs = t->out.cs;                                             \
        if (ocs == 1)                                                                              \
            for (int64_t j = j0; j < j1; ++j) out[j] = in[j * ics];                                \
        else                                                                                       \
            for (int64_t j = j0; j < j1; ++j) out[j * ocs] = in[j * ics];                          \
    }

COPY_ROW(8, uint8_t)
COPY_ROW(16, uint16_t)
COPY_ROW(32, uint32_t)
COPY_ROW(64, uint64_t)

static void copy_row(void *arg, int64_t b, int64_t i, int64_t j0, int64_t j1)
{
    const dt_copy2d *t = arg;
    switch (t->elem) {
    case 1: copy_row_8(t, b, i, j0, j1); break;
    case 2: copy_row_16(t, b, i, j0, j1); break;
    case 4: copy_row_32(t, b, i, j0, j1); break;
    default: copy_row_64(t, b, i, j0, j1); break;
    }
}

/* Rows [i0, i1) of matrix b in square blocks of tile x tile elements. In a transpose one of
 * the two matrices is read or written across rows; a block keeps the tile lines it touches
 * in L1 until all their elements are used, instead of fetching a line per element. */
#define COPY_BLOCKS(BITS, U)                                                                       \
    static void copy_blocks_##BITS(const dt_copy2d *t, int64_t b, int64_t i0, int64_t i1,          \
                                   int64_t tile)                                                   \
    {                                                                                              \
        const U *in = (const U *)t->in.base + b * t->in.bs;                                        \
        U *out = (U *)t->out.base + b * t->out.bs;                                                 \
        const int64_t irs = t->in.rs, ics = t->in.cs, ors = t->out.rs, ocs = t->out.cs;            \
        for (int64_t j0 = 0; j0 < t->cols; j0 += tile) {                                           \
            const int64_t j1 = min64(j0 + tile, t->cols);                                          \
            for (int64_t i = i0; i < i1; ++i) {                                                    \
                const U *src = in + i * irs;                                                       \
                U *dst = out + i * ors;                                                            \
                if (ocs == 1)                                                                      \
                    for (int64_t j = j0; j < j1; ++j) dst[j] = src[j * ics];                       \
                else                                                                               \
                    for (int64_t j = j0; j < j1; ++j) dst[j * ocs] = src[j * ics];                 \
            }                                                                                      \
        }                                                                                          \
    }

COPY_BLOCKS(8, uint8_t)
COPY_BLOCKS(16, uint16_t)
COPY_BLOCKS(32, uint32_t)
COPY_BLOCKS(64, uint64_t)

/* One block row per task. */
static void copy_blocked(const dt_copy2d *t, int64_t tile)
{
    const int64_t brows = dt_ceil_div(t->rows, tile);
    const int64_t tasks = t->batch * brows;
    const int nt = cpu_threads_for(t->batch * t->rows * t->cols);
    (void)nt;
    CPU_PARALLEL_FOR(x, tasks, {
        const int64_t b = x / brows, i0 = x % brows * tile, i1 = min64(i0 + tile, t->rows);
        switch (t->elem) {
        case 1: copy_blocks_8(t, b, i0, i1, tile); break;
        case 2: copy_blocks_16(t, b, i0, i1, tile); break;
        case 4: copy_blocks_32(t, b, i0, i1, tile); break;
        default: copy_blocks_64(t, b, i0, i1, tile); break;
        }
    });
}

/* A transpose proper (in contiguous down a column of out, out along its rows) moves
 * K x K micro-blocks of 16-byte lines (K = 16 / elem) through registers: K loads, log2(K)
 * rounds of unpacks at the element's width (round r pairs line x with line x + K/2 into lines
 * 2x and 2x+1, which after log2(K) rounds is the transpose), K stores. transpose_tiles
 * groups them into blocks of one 64-byte cache line square (below); scalar loops take the
 * edges. The bits move unchanged, so results are the same on any thread count or split. */
#if !defined(DUET_CPU_PORTABLE) && defined(__SSE2__)
#define CPU_COPY_SSE2 1
#include <emmintrin.h>

#define TRANSPOSE_MICRO(BITS, K, LO, HI)                                                           \
    static void transpose_micro_##BITS(const unsigned char *src, int64_t ss, unsigned char *dst,   \
                                       int64_t ds)                                                 \
    {                                                                                              \
        __m128i r[K], t[K];                                                                        \
        CPU_UNROLL for (int x = 0; x < K; ++x)                                                     \
            r[x] = _mm_loadu_si128((const __m128i *)(src + x * ss));                               \
        CPU_UNROLL for (int round = 1; round < K; round *= 2)                                      \
        {                                                                                          \
            CPU_UNROLL for (int x = 0; x < K / 2; ++x)                                             \
            {                                                                                      \
                t[2 * x] = LO(r[x], r[x + K / 2]);                                                 \
                t[2 * x + 1] = HI(r[x], r[x + K / 2]);                                             \
            }                                                                                      \
            CPU_UNROLL for (int x = 0; x < K; ++x) r[x] = t[x];                                    \
        }                                                                                          \
        CPU_UNROLL for (int x = 0; x < K; ++x) _mm_storeu_si128((__m128i *)(dst + x * ds), r[x]);  \
    }

TRANSPOSE_MICRO(8, 16, _mm_unpacklo_epi8, _mm_unpackhi_epi8)
TRANSPOSE_MICRO(16, 8, _mm_unpacklo_epi16, _mm_unpackhi_epi16)
TRANSPOSE_MICRO(32, 4, _mm_unpacklo_epi32, _mm_unpackhi_epi32)
TRANSPOSE_MICRO(64, 2, _mm_unpacklo_epi64, _mm_unpackhi_epi64)

/* out[i][j] = in[i + j * ics] for rows [i0, i1) and columns [j0, j1), one element at a time. */
static void transpose_edge(const dt_copy2d *t, const unsigned char *in, unsigned char *out,
                           int64_t i0, int64_t i1, int64_t j0, int64_t j1)
{
    const size_t e = t->elem;
    for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j)
            memcpy(out + (size_t)(i * t->out.rs + j) * e, in + (size_t)(i + j * t->in.cs) * e, e);
}

/* Destinations of at least this many bytes are written with non-temporal stores: a plain
 * store first reads the line it writes (a third pass over memory beside the read of in and
 * the write of out), and a destination this large leaves the caches anyway. Smaller ones
 * stay cached for whatever reads them next. (Defined on the command line, it sends small
 * shapes down the streaming path, for testing.) */
#ifndef CPU_TRANSPOSE_STREAM_MIN
#define CPU_TRANSPOSE_STREAM_MIN ((int64_t)4 << 20)
#endif

/* How far ahead along in's rows the next lines are prefetched (into L2), in bytes: a band
 * reads its width / elem rows of in side by side, more streams than the hardware prefetcher
 * follows (256 and 512 beat none by 1.5x on one thread; 1024 and more fell back). */
#define TRANSPOSE_PREFETCH 256

/* A task's band of out's columns and run of its rows, in bytes. Wide bands write each row of
 * out in runs of several whole lines (measured on a 2-core Zen 5, 4096^2 of each size: 64-byte
 * bands ran at half the speed of 512 to 2048, which were alike). 1-byte elements take a
 * narrower band: its 1024 rows of in, 4 KiB apart, fall into 32 sets of a 1 MiB 8-way L2, and
 * their prefetched lines evicted each other (128 bytes ran 5-10% faster). Runs of rows let
 * narrow matrices still share out among threads. All are multiples of a block's 64 bytes. */
#define TRANSPOSE_BAND_BYTES_1 128
#define TRANSPOSE_BAND_BYTES 1024
#define TRANSPOSE_RUN_BYTES 4096

/* Streamed 1-byte transposes work on tiles of TRANSPOSE_STAGE_BYTES of out's columns by
 * TRANSPOSE_STAGE_RUN of its rows. A tile's rows of in (one per column of out) are first
 * copied whole, in runs of TRANSPOSE_STAGE_RUN bytes, into a per-thread tile buffer in the
 * stream's workspace (288 KiB, L2); its 64 x 64 blocks are transposed from there into a
 * staging buffer of 64 rows x TRANSPOSE_STAGE_BYTES (32 KiB, L1), whose rows are streamed to
 * out whole. Read straight from in, a band's 512 rows 4 KiB apart fall into 16 of the L2's
 * sets and lines prefetched a few blocks ahead were evicted before use; read in runs along
 * the rows, each run is 8 consecutive lines the hardware prefetcher follows (measured on the
 * 2-core Zen 5, 4096^2, two threads: 0.62-0.75 ms against 0.78-0.90 read straight from in). Non-temporal stores to
 * lines 4 KiB apart, a block's 64 rows in turn, ran at a third of the speed of the same bytes
 * written row by row (16 MiB of streamed stores took 1.5 ms in runs of 128 bytes, 0.45 ms in
 * runs of 512 or more). */
#define TRANSPOSE_STAGE_BYTES 512
/* ...and runs of this many of out's rows: 64 tasks for 4096^2, handed out as threads come
 * free (runs of 128 rows were 1.25x slower; whole bands, split statically, 1.2x slower on two
 * threads of the busy host). */
#define TRANSPOSE_STAGE_RUN 512
/* The tile buffer's rows are a line longer than a run, so that a block's 64 rows do not share
 * one L1 set (rows 512 bytes apart would fall into 8 of its 64). */
#define TRANSPOSE_TILE_PITCH (TRANSPOSE_STAGE_RUN + 64)
/* Workspace per thread: the tile buffer, then the staging buffer (320 KiB)... */
#define TRANSPOSE_STAGE_SCRATCH                                                                    \
    ((size_t)TRANSPOSE_STAGE_BYTES * TRANSPOSE_TILE_PITCH + (size_t)64 * TRANSPOSE_STAGE_BYTES)
/* ...at the start of a share of 1 MiB. Shares packed 320 KiB apart ran 1.1-1.3x slower on two
 * threads of the 2-core Zen 5 (4096^2: 0.78-0.80 ms against 0.60-0.63 with shares 768 KiB or
 * more apart, 0.65-0.68 at 512 KiB; the cause was not pinned down). */
#define TRANSPOSE_STAGE_SHARE ((size_t)1 << 20)
_Static_assert(TRANSPOSE_STAGE_SCRATCH <= TRANSPOSE_STAGE_SHARE,
               "a thread's share holds its buffers");

/* The 1-byte block in AVX-512 registers where the CPU has AVX-512BW (chosen at run time; 0
 * on the command line keeps the SSE2 blocks, to test them on such a CPU). */
#ifndef CPU_TRANSPOSE_AVX512
#if defined(__GNUC__) && defined(__x86_64__)
#define CPU_TRANSPOSE_AVX512 1
#else
#define CPU_TRANSPOSE_AVX512 0
#endif
#endif

/* A stride in bytes. It is used only along a dimension that spans whole blocks, where the
 * view's validation bounds it; along a shorter one (a single column, say) any stride is
 * valid and may be huge, so the product wraps instead of overflowing (found by the API fuzzer:
 * a one-column input with a column stride of 2^62). */
static int64_t byte_stride(int64_t stride, size_t e)
{
    return (int64_t)((uint64_t)stride * (uint64_t)e);
}

/* Rows [i0, i1) x columns [j0, j1) of out, K rows of out at a time, straight from in to out:
 * the edges of the blocked walk below. */
static void transpose_tile(const dt_copy2d *t, int64_t b, int64_t i0, int64_t i1, int64_t j0,
                           int64_t j1)
{
    const size_t e = t->elem;
    const int64_t K = (int64_t)(16 / e);
    const unsigned char *in = (const unsigned char *)t->in.base + (size_t)(b * t->in.bs) * e;
    unsigned char *out = (unsigned char *)t->out.base + (size_t)(b * t->out.bs) * e;
    const int64_t ss = byte_stride(t->in.cs, e), ds = byte_stride(t->out.rs, e);
    const int64_t iK = i0 + (i1 - i0) / K * K, jK = j0 + (j1 - j0) / K * K;
    for (int64_t i = i0; i < iK; i += K)
        for (int64_t j = j0; j < jK; j += K) {
            const unsigned char *src = in + (size_t)(i + j * t->in.cs) * e;
            unsigned char *dst = out + (size_t)(i * t->out.rs + j) * e;
            switch (e) {
            case 1: transpose_micro_8(src, ss, dst, ds); break;
            case 2: transpose_micro_16(src, ss, dst, ds); break;
            case 4: transpose_micro_32(src, ss, dst, ds); break;
            default: transpose_micro_64(src, ss, dst, ds); break;
            }
        }
    if (jK < j1) transpose_edge(t, in, out, i0, iK, jK, j1);
    if (iK < i1) transpose_edge(t, in, out, iK, i1, j0, j1);
}

/* One R x R block, R = 64 / elem: R lines of in (src, ss bytes apart) become R lines of out
 * (dst, ds bytes apart). The lines of in are copied whole into an L1 scratch first: with a
 * power-of-two stride they all fall in one L1 set, and read 16 bytes at a time by the K x K
 * micro-blocks they would evict each other before their other bytes were used. With stream,
 * out's lines are assembled in a second scratch and written whole with non-temporal stores
 * (K rows written 16 bytes at a time would keep K partial lines open at once). */
#define TRANSPOSE_BLOCK(BITS)                                                                      \
    static void transpose_block_##BITS(const unsigned char *src, int64_t ss, unsigned char *dst,   \
                                       int64_t ds, int stream)                                     \
    {                                                                                              \
        enum { E = BITS / 8, R = 64 / E, K = 16 / E };                                             \
        _Alignas(64) unsigned char a[R * 64], o[R * 64];                                           \
        for (int r = 0; r < R; ++r) {                                                              \
            const unsigned char *line = src + r * ss;                                              \
            _mm_prefetch((const char *)(line + TRANSPOSE_PREFETCH), _MM_HINT_T1);                  \
            const __m128i v0 = _mm_loadu_si128((const __m128i *)line);                             \
            const __m128i v1 = _mm_loadu_si128((const __m128i *)(line + 16));                      \
            const __m128i v2 = _mm_loadu_si128((const __m128i *)(line + 32));                      \
            const __m128i v3 = _mm_loadu_si128((const __m128i *)(line + 48));                      \
            _mm_store_si128((__m128i *)(a + r * 64), v0);                                          \
            _mm_store_si128((__m128i *)(a + r * 64 + 16), v1);                                     \
            _mm_store_si128((__m128i *)(a + r * 64 + 32), v2);                                     \
            _mm_store_si128((__m128i *)(a + r * 64 + 48), v3);                                     \
        }                                                                                          \
        unsigned char *to = stream ? o : dst;                                                      \
        const int64_t ts = stream ? 64 : ds;                                                       \
        for (int r = 0; r < R; r += K)                                                             \
            for (int c = 0; c < R; c += K)                                                         \
                transpose_micro_##BITS(a + r * 64 + c * E, 64, to + c * ts + r * E, ts);           \
        if (stream)                                                                                \
            for (int c = 0; c < R; ++c)                                                            \
                for (int x = 0; x < 64; x += 16)                                                   \
                    _mm_stream_si128((__m128i *)(dst + c * ds + x),                                \
                                     _mm_load_si128((const __m128i *)(o + c * 64 + x)));           \
    }

TRANSPOSE_BLOCK(8)
TRANSPOSE_BLOCK(16)
TRANSPOSE_BLOCK(32)
TRANSPOSE_BLOCK(64)

/* The 1-byte kernels the walk calls, chosen once for the CPU: a 64 x 64 byte block written
 * with plain stores (dst, ds bytes apart), and rows of a staging buffer (w bytes each, a
 * multiple of 64; fp bytes apart, 64-byte aligned) streamed to out (tp bytes apart, 16-byte
 * aligned) with non-temporal stores. SSE2 below, AVX-512 where the CPU has it. */
typedef struct transpose_kernels_8 {
    void (*block)(const unsigned char *src, int64_t ss, unsigned char *dst, int64_t ds);
    void (*stream_rows)(const unsigned char *from, int64_t fp, unsigned char *to, int64_t tp,
                        int64_t rows, int64_t w);
} transpose_kernels_8;

static void transpose_block_8_sse2(const unsigned char *src, int64_t ss, unsigned char *dst,
                                   int64_t ds)
{
    transpose_block_8(src, ss, dst, ds, 0);
}

static void stream_rows_sse2(const unsigned char *from, int64_t fp, unsigned char *to, int64_t tp,
                             int64_t rows, int64_t w)
{
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < w; c += 16)
            _mm_stream_si128((__m128i *)(to + r * tp + c),
                             _mm_load_si128((const __m128i *)(from + r * fp + c)));
}

static const transpose_kernels_8 transpose_kernels_8_sse2 = {transpose_block_8_sse2,
                                                             stream_rows_sse2};

#if CPU_TRANSPOSE_AVX512
#include <immintrin.h>

/* The same 64 x 64 byte block with each line of in read by one 64-byte load. A zmm holds a
 * line as four 16-byte lanes, and the byte unpacks work within lanes, so the 16 x 16 unpack
 * ladder of transpose_micro_8 run on 16 whole lines (rows 16g..16g+15 of in) transposes four
 * 16 x 16 sub-blocks at once: afterwards line k holds, in lane c, row 16c + k of out's
 * columns 16g..16g+15. A 4 x 4 transpose of lanes across the four groups' line k then makes
 * out's rows k, 16 + k, 32 + k and 48 + k whole. The lines need no L1 scratch: each is read
 * once, whole, so the L1 set they share (a power-of-two stride) cannot evict a line before
 * its other bytes are used. 256 + 128 zmm shuffles against the SSE2 block's 1024 xmm ones. */
__attribute__((target("avx512f,avx512bw"))) static void
transpose_block_8_avx512(const unsigned char *src, int64_t ss, unsigned char *dst, int64_t ds)
{
    _Alignas(64) __m512i g[4][16];
    CPU_UNROLL for (int q = 0; q < 4; ++q)
    {
        __m512i r[16], t[16];
        CPU_UNROLL for (int x = 0; x < 16; ++x)
        {
            const unsigned char *line = src + (16 * q + x) * ss;
            _mm_prefetch((const char *)(line + TRANSPOSE_PREFETCH), _MM_HINT_T1);
            r[x] = _mm512_loadu_si512((const void *)line);
        }
        CPU_UNROLL for (int round = 1; round < 16; round *= 2)
        {
            CPU_UNROLL for (int x = 0; x < 8; ++x)
            {
                t[2 * x] = _mm512_unpacklo_epi8(r[x], r[x + 8]);
                t[2 * x + 1] = _mm512_unpackhi_epi8(r[x], r[x + 8]);
            }
            CPU_UNROLL for (int x = 0; x < 16; ++x) r[x] = t[x];
        }
        CPU_UNROLL for (int x = 0; x < 16; ++x) g[q][x] = r[x];
    }
    /* Lanes (a0 a1 a2 a3), (b..), (c..), (d..) -> (a0 b0 c0 d0), (a1 b1 c1 d1), ... */
    CPU_UNROLL for (int k = 0; k < 16; ++k)
    {
        const __m512i a = g[0][k], b = g[1][k], c = g[2][k], d = g[3][k];
        const __m512i ab01 = _mm512_shuffle_i64x2(a, b, 0x44), ab23 = _mm512_shuffle_i64x2(a, b, 0xEE);
        const __m512i cd01 = _mm512_shuffle_i64x2(c, d, 0x44), cd23 = _mm512_shuffle_i64x2(c, d, 0xEE);
        _mm512_storeu_si512((void *)(dst + k * ds), _mm512_shuffle_i64x2(ab01, cd01, 0x88));
        _mm512_storeu_si512((void *)(dst + (16 + k) * ds), _mm512_shuffle_i64x2(ab01, cd01, 0xDD));
        _mm512_storeu_si512((void *)(dst + (32 + k) * ds), _mm512_shuffle_i64x2(ab23, cd23, 0x88));
        _mm512_storeu_si512((void *)(dst + (48 + k) * ds), _mm512_shuffle_i64x2(ab23, cd23, 0xDD));
    }
}

/* Whole 64-byte lines per non-temporal store: the same rows streamed 16 bytes at a time took
 * 1.1-1.2x as long (2-core Zen 5, 4096^2 1-byte transpose, one or two threads). A row of out
 * that does not start on a line (out's rows 16-byte aligned only) begins and ends with 16-byte
 * stores up to the first and from the last whole line. */
__attribute__((target("avx512f"))) static void stream_rows_avx512(const unsigned char *from,
                                                                  int64_t fp, unsigned char *to,
                                                                  int64_t tp, int64_t rows,
                                                                  int64_t w)
{
    for (int64_t r = 0; r < rows; ++r) {
        const unsigned char *f = from + r * fp;
        unsigned char *d = to + r * tp;
        const int64_t head = (int64_t)((64 - ((uintptr_t)d & 63)) & 63);
        const int64_t body = head + (w - head) / 64 * 64;
        int64_t c = 0;
        for (; c < head; c += 16)
            _mm_stream_si128((__m128i *)(d + c), _mm_loadu_si128((const __m128i *)(f + c)));
        for (; c < body; c += 64)
            _mm512_stream_si512((void *)(d + c), _mm512_loadu_si512((const void *)(f + c)));
        for (; c < w; c += 16)
            _mm_stream_si128((__m128i *)(d + c), _mm_loadu_si128((const __m128i *)(f + c)));
    }
}

static const transpose_kernels_8 transpose_kernels_8_avx512 = {transpose_block_8_avx512,
                                                               stream_rows_avx512};
#endif /* CPU_TRANSPOSE_AVX512 */

static const transpose_kernels_8 *transpose_kernels_8_for_cpu(void)
{
#if CPU_TRANSPOSE_AVX512
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"))
        return &transpose_kernels_8_avx512;
#endif /* CPU_TRANSPOSE_AVX512 */
    return &transpose_kernels_8_sse2;
}

/* Rows [i0, iR) x columns [j0, jR) of a 1-byte out (whole 64 x 64 blocks, iR - i0 at most
 * TRANSPOSE_STAGE_RUN, jR - j0 at most TRANSPOSE_STAGE_BYTES, out's rows 16-byte aligned):
 * the tile's rows of in are copied into the tile buffer, then each row of its blocks is
 * transposed into the staging buffer and streamed to out a row at a time. scratch is the
 * thread's TRANSPOSE_STAGE_SCRATCH bytes, 64-byte aligned. */
static void transpose_staged_8(const transpose_kernels_8 *k, const unsigned char *in, int64_t ics,
                               unsigned char *out, int64_t ors, int64_t i0, int64_t iR, int64_t j0,
                               int64_t jR, unsigned char *scratch)
{
    unsigned char *tile = scratch;
    unsigned char *stage = scratch + (size_t)TRANSPOSE_STAGE_BYTES * TRANSPOSE_TILE_PITCH;
    const int64_t n = iR - i0, m = jR - j0;
    if (n <= 0 || m <= 0) return;
    for (int64_t j = 0; j < m; ++j)
        memcpy(tile + j * TRANSPOSE_TILE_PITCH, in + i0 + (j0 + j) * ics, (size_t)n);
    for (int64_t i = 0; i < n; i += 64) {
        for (int64_t j = 0; j < m; j += 64)
            k->block(tile + i + j * TRANSPOSE_TILE_PITCH, TRANSPOSE_TILE_PITCH, stage + j,
                     TRANSPOSE_STAGE_BYTES);
        k->stream_rows(stage, TRANSPOSE_STAGE_BYTES, out + (i0 + i) * ors + j0, ors, 64, m);
    }
}

/* A task is a band of TRANSPOSE_BAND_BYTES(_1) of out's columns by TRANSPOSE_RUN_BYTES / elem of
 * its rows, swept down one row of R x R blocks (R = 64 / elem) at a time: each block reads R
 * whole lines of in and writes R whole lines of out, and each row of out is written in runs
 * of a band's width (threads share no line where out's rows are 64-byte aligned). Streamed
 * 1-byte transposes take tiles of TRANSPOSE_STAGE_BYTES by TRANSPOSE_STAGE_RUN rows, handed
 * out dynamically, through transpose_staged_8 and the thread's share of scratch. The rows
 * below the last whole block and the columns beside it go through transpose_tile.
 * transpose_walk holds the walk's shape, shared by its tasks. */
typedef struct transpose_walk {
    int64_t R, W, H, bands, runs, ss, ds;
    int stream, staged;
    const transpose_kernels_8 *k8;
    unsigned char *scratch; /* staged: TRANSPOSE_STAGE_SCRATCH bytes per thread */
} transpose_walk;

/* Task x of the walk, run by thread tid of the region (0 outside one). */
static void transpose_tiles_task(const dt_copy2d *t, const transpose_walk *w, int64_t x, int tid)
{
    const size_t e = t->elem;
    const int64_t R = w->R, ss = w->ss, ds = w->ds;
    const int64_t b = x / (w->bands * w->runs), j0 = x / w->runs % w->bands * w->W;
    const int64_t j1 = min64(j0 + w->W, t->cols), i0 = x % w->runs * w->H;
    const int64_t i1 = min64(i0 + w->H, t->rows);
    const int64_t iR = i0 + (i1 - i0) / R * R;
    const int64_t jR = j0 + (j1 - j0) / R * R;
    const unsigned char *in = (const unsigned char *)t->in.base + (size_t)(b * t->in.bs) * e;
    unsigned char *out = (unsigned char *)t->out.base + (size_t)(b * t->out.bs) * e;
    if (w->staged)
        transpose_staged_8(w->k8, in, t->in.cs, out, t->out.rs, i0, iR, j0, jR,
                           w->scratch + (size_t)tid * TRANSPOSE_STAGE_SHARE);
    else
        for (int64_t i = i0; i < iR; i += R)
            for (int64_t j = j0; j < jR; j += R) {
                const unsigned char *src = in + (size_t)(i + j * t->in.cs) * e;
                unsigned char *dst = out + (size_t)(i * t->out.rs + j) * e;
                switch (e) {
                case 1: w->k8->block(src, ss, dst, ds); break;
                case 2: transpose_block_16(src, ss, dst, ds, w->stream); break;
                case 4: transpose_block_32(src, ss, dst, ds, w->stream); break;
                default: transpose_block_64(src, ss, dst, ds, w->stream); break;
                }
            }
    /* Non-temporal stores are weakly ordered: visible before the op returns. */
    if (w->stream) _mm_sfence();
    if (iR < i1 && j0 < jR) transpose_tile(t, b, iR, i1, j0, jR);
    if (jR < j1) transpose_tile(t, b, i0, i1, jR, j1);
}

/* *ws_used: the bytes of the stream's workspace it used. */
static void transpose_tiles(dt_context *ctx, void *stream, const dt_copy2d *t, size_t *ws_used)
{
    const size_t e = t->elem;
    transpose_walk w;
    w.R = (int64_t)(64 / e);
    w.ss = byte_stride(t->in.cs, e);
    w.ds = byte_stride(t->out.rs, e);
    /* _mm_stream_si128 needs 16-byte aligned addresses: every row of out (and so every
     * block, R * elem = 64 bytes from the last) must start on one. */
    w.stream = t->batch * t->rows * t->cols * (int64_t)e >= CPU_TRANSPOSE_STREAM_MIN &&
               ((uintptr_t)t->out.base & 15) == 0 && w.ds % 16 == 0 &&
               (t->batch == 1 || (t->out.bs * (int64_t)e) % 16 == 0);
    const int nt = cpu_threads_for(t->batch * t->rows * t->cols);
    w.staged = w.stream && e == 1;
    w.scratch = NULL;
    *ws_used = 0;
    if (w.staged) {
        /* The workspace is reserved once per stream and kept; where it cannot grow (out of
         * memory), the blocks read in straight away instead: slower, but the transpose needs
         * no memory of its own. */
        void *p = NULL;
        const size_t bytes = (size_t)(nt - 1) * TRANSPOSE_STAGE_SHARE + TRANSPOSE_STAGE_SCRATCH;
        if (dt_workspace_reserve(ctx, stream, t->ws, bytes, "duet_transpose", &p) == DUET_SUCCESS) {
            w.scratch = (unsigned char *)p;
            *ws_used = bytes;
        } else {
            dt_clear_error();
            w.staged = 0;
        }
    }
    w.W = w.staged   ? TRANSPOSE_STAGE_BYTES
          : e == 1   ? TRANSPOSE_BAND_BYTES_1
                     : (int64_t)(TRANSPOSE_BAND_BYTES / e);
    w.H = w.staged ? TRANSPOSE_STAGE_RUN : (int64_t)(TRANSPOSE_RUN_BYTES / e);
    w.bands = dt_ceil_div(t->cols, w.W);
    w.runs = dt_ceil_div(t->rows, w.H);
    w.k8 = transpose_kernels_8_for_cpu();
    const int64_t tasks = t->batch * w.bands * w.runs;
    if (w.staged && nt > 1) {
        /* Many short tasks handed out as threads come free: on a shared host one thread is
         * often held up, and the other then takes on more of the tasks than half. */
        CPU_OMP("omp parallel for schedule(dynamic) num_threads(nt)")
        for (int64_t x = 0; x < tasks; ++x) transpose_tiles_task(t, &w, x, cpu_share_index(nt));
        return;
    }
    /* One thread (tid 0: the loop below opens no region when nt is 1), or the unstaged walk,
     * which uses no scratch. */
    CPU_PARALLEL_FOR(x, tasks, transpose_tiles_task(t, &w, x, 0););
}
#endif /* CPU_COPY_SSE2 */

/* Rows that are contiguous in both matrices are copied whole, the whole matrix at once when
 * it is packed in both. */
static void copy_rows(const dt_copy2d *t)
{
    const size_t row_bytes = (size_t)t->cols * t->elem;
    const int packed = t->in.rs == t->cols && t->out.rs == t->cols;
    const int64_t rows = packed ? 1 : t->rows;
    const size_t bytes = packed ? row_bytes * (size_t)t->rows : row_bytes;
    const int64_t tasks = t->batch * rows;
    /* A large copy runs on every core: one core rarely saturates memory bandwidth. */
    const int nt = cpu_threads_for(t->batch * t->rows * t->cols);
    (void)nt;
    if (tasks == 1 && nt > 1) {
        const size_t chunk = (bytes + (size_t)nt - 1) / (size_t)nt;
        CPU_OMP("omp parallel for schedule(static) num_threads(nt)")
        for (int c = 0; c < nt; ++c) {
            const size_t lo = (size_t)c * chunk;
            if (lo < bytes)
                memcpy((char *)t->out.base + lo, (const char *)t->in.base + lo,
                       bytes - lo < chunk ? bytes - lo : chunk);
        }
        return;
    }
    CPU_PARALLEL_FOR(x, tasks, {
        const int64_t b = x / rows, i = x % rows;
        memcpy((char *)t->out.base + (size_t)(b * t->out.bs + i * t->out.rs) * t->elem,
               (const char *)t->in.base + (size_t)(b * t->in.bs + i * t->in.rs) * t->elem, bytes);
    });
}

duet_status be_copy2d(dt_context *ctx, void *stream, const dt_copy2d *t, const dt_plan *plan,
                      duet_launch_info *info)
{
    if (t->elem != 1 && t->elem != 2 && t->elem != 4 && t->elem != 8)
        return dt_fail(DUET_ERROR_UNSUPPORTED, "duet_transpose",
                       "elements of %zu bytes (1, 2, 4 or 8 are moved)", t->elem);
    /* A constant, not snprintf: this runs on every call (docs/performance.md, call overhead). */
    const char *suffix = t->elem == 1 ? "1b" : t->elem == 2 ? "2b" : t->elem == 4 ? "4b" : "8b";
    if (t->rows <= 0 || t->cols <= 0 || t->batch <= 0) {
        cpu_fill_info(info, "transpose", suffix, plan);
        if (info) info->launches = 0;
        return DUET_SUCCESS;
    }
    if (t->in_place) return cpu_transpose_inplace(ctx, stream, t, plan, info);

    /* Work on the orientation in which out is contiguous along a row when it is contiguous
     * at all: then the inner loops write with unit stride. */
    dt_copy2d v = *t;
    if (v.out.cs != 1 && v.out.rs == 1) {
        v.rows = t->cols;
        v.cols = t->rows;
        v.in.rs = t->in.cs;
        v.in.cs = t->in.rs;
        v.out.rs = t->out.cs;
        v.out.cs = t->out.rs;
    }

    int64_t tx, ty, tz;
    duet_status st;
    size_t ws_used = 0;
    switch (plan->algo) {
    case DUET_ALGO_NAIVE:
        cpu_walk(t->batch, t->rows, t->cols, t->batch, t->rows, t->cols, 1, copy_row, (void *)t);
        break;
    case DUET_ALGO_GRID_STRIDE:
        st = cpu_grid_threads(plan, "duet_transpose", &tx, &ty, &tz);
        if (st != DUET_SUCCESS) return st;
        cpu_walk(t->batch, t->rows, t->cols, tz, ty, tx, 1, copy_row, (void *)t);
        break;
    case DUET_ALGO_TILED:
        if (plan->tile < 1 || plan->tile > 32)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, "duet_transpose",
                           "tile %d is outside 1..32", plan->tile);
        copy_blocked(&v, plan->tile);
        break;
    case DUET_ALGO_TILED_PADDED: /* the padding is a shared-memory bank matter; 32 x 32 here */
        copy_blocked(&v, 32);
        break;
    case DUET_ALGO_AUTO:
        if (v.in.cs == 1 && v.out.cs == 1) {
            copy_rows(&v); /* a row per thread: the naive kernel's rows, memcpy fast */
#ifdef CPU_COPY_SSE2
        } else if (v.in.rs == 1 && v.out.cs == 1) {
            transpose_tiles(ctx, stream, &v, &ws_used);
#endif /* CPU_COPY_SSE2 */
        } else {
            copy_blocked(&v, 32); /* 32 x 4 bytes: two lines per block row, L1-resident */
        }
        break;
    default:
        return dt_fail(DUET_ERROR_UNSUPPORTED, "duet_transpose", "transpose has no %s algorithm",
                       duet_algorithm_name(plan->algo));
    }
    cpu_fill_info(info, "transpose", suffix, plan);
    if (info) info->workspace_bytes = ws_used;
    return DUET_SUCCESS;
}

/* ---- elementwise --------------------------------------------------------------------------- */

/* The operand values in the dtype's arithmetic (i32: uint32_t bits, wrapping). */
typedef struct ew_job {
    const dt_elementwise *e;
    union {
        float f32;
        double f64;
        uint32_t u32;
    } alpha, beta;
    uint64_t fill; /* the fill value's bits, in the low elem bytes */
} ew_job;

/* Unit-stride rows get a loop of their own so that the compiler vectorises it. add reads
 * a and b before it writes c, so c may be exactly a or b (no restrict here). */
#define EW_ROWS(SFX, T, F)                                                                         \
    static void scale_row_##SFX(void *arg, int64_t b, int64_t i, int64_t j0, int64_t j1)           \
    {                                                                                              \
        const ew_job *job = arg;                                                                   \
        const dt_elementwise *e = job->e;                                                          \
        const T alpha = job->alpha.F;                                                              \
        T *c = (T *)e->c.base + b * e->c.bs + i * e->c.rs;                                         \
        const int64_t cs = e->c.cs;                                                                \
        if (cs == 1)                                                                               \
            for (int64_t j = j0; j < j1; ++j) c[j] = alpha * c[j];                                 \
        else                                                                                       \
            for (int64_t j = j0; j < j1; ++j) c[j * cs] = alpha * c[j * cs];                       \
    }                                                                                              \
                                                                                                   \
    static void add_row_##SFX(void *arg, int64_t b, int64_t i, int64_t j0, int64_t j1)             \
    {                                                                                              \
        const ew_job *job = arg;                                                                   \
        const dt_elementwise *e = job->e;                                                          \
        const T alpha = job->alpha.F, beta = job->beta.F;                                          \
        const T *x = (const T *)e->a.base + b * e->a.bs + i * e->a.rs;                             \
        const T *y = (const T *)e->b.base + b * e->b.bs + i * e->b.rs;                             \
        T *c = (T *)e->c.base + b * e->c.bs + i * e->c.rs;                                         \
        const int64_t xs = e->a.cs, ys = e->b.cs, cs = e->c.cs;                                    \
        if (xs == 1 && ys == 1 && cs == 1)                                                         \
            for (int64_t j = j0; j < j1; ++j) c[j] = alpha * x[j] + beta * y[j];                   \
        else                                                                                       \
            for (int64_t j = j0; j < j1; ++j) c[j * cs] = alpha * x[j * xs] + beta * y[j * ys];    \
    }

EW_ROWS(f32, float, f32)
EW_ROWS(f64, double, f64)
EW_ROWS(i32, uint32_t, u32)

#define FILL_ROW(BITS, U)                                                                          \
    static void fill_row_##BITS(void *arg, int64_t b, int64_t i, int64_t j0, int64_t j1)           \
    {                                                                                              \
        const ew_job *job = arg;                                                                   \
        const dt_elementwise *e = job->e;                                                          \
        const U v = (U)job->fill;                                                                  \
        U *c = (U *)e->c.base + b * e->c.bs + i * e->c.rs;                                         \
        const int64_t cs = e->c.cs;                                                                \
        if (cs == 1)                                                                               \
            for (int64_t j = j0; j < j1; ++j) c[j] = v;                                            \
        else                                                                                       \
            for (int64_t j = j0; j < j1; ++j) c[j * cs] = v;                                       \
    }

FILL_ROW(8, uint8_t)
FILL_ROW(16, uint16_t)
FILL_ROW(32, uint32_t)
FILL_ROW(64, uint64_t)

/* v rounded to nearest, ties to even, straight from double (no double rounding through
 * float) into a binary format of exp_bits exponent and man_bits fraction bits: IEEE half
 * (5, 10) or bfloat16 (8, 7). Overflow gives infinity, NaN a quiet NaN of the same sign. */
static uint16_t narrow_float(double v, int exp_bits, int man_bits)
{
    uint64_t d;
    memcpy(&d, &v, sizeof d);
    const uint64_t sign = (d >> 63) << (exp_bits + man_bits);
    const uint64_t inf = (((uint64_t)1 << exp_bits) - 1) << man_bits;
    const int de = (int)((d >> 52) & 0x7ff);
    const uint64_t frac = d & (((uint64_t)1 << 52) - 1);
    if (de == 0x7ff) return (uint16_t)(sign | inf | (frac ? (uint64_t)1 << (man_bits - 1) : 0));
    /* Zero, or a double subnormal: far below half the smallest subnormal of either format. */
    if (de == 0) return (uint16_t)sign;
    const int emin = 2 - (1 << (exp_bits - 1)); /* 1 - bias */
    const int e = de - 1023;
    const uint64_t sig = frac | (uint64_t)1 << 52; /* units of 2^(e - 52) */
    /* Bits of sig below the target's last place: that place is 2^(max(e, emin) - man_bits). */
    const int drop = 52 - man_bits + (e < emin ? emin - e : 0);
    uint64_t q = 0;
    if (drop < 64) {
        const uint64_t rem = sig & (((uint64_t)1 << drop) - 1), half = (uint64_t)1 << (drop - 1);
        q = sig >> drop;
        if (rem > half || (rem == half && (q & 1))) ++q;
    }
    /* Normal: (biased exponent << man_bits) + fraction == ((e - emin) << man_bits) + q, and a
     * rounding carry into q's top bit steps the exponent by itself; subnormal: q. */
    const uint64_t enc = (e >= emin ? (uint64_t)(e - emin) << man_bits : 0) + q;
    return (uint16_t)(sign | (enc >= inf ? inf : enc));
}

/* The bits of value in the dtype; 0 when an integer dtype cannot hold it exactly. */
static int fill_bits(duet_dtype dtype, double value, uint64_t *bits)
{
    uint32_t u;
    float f;
    switch (dtype) {
    case DUET_DTYPE_F32:
        f = (float)value;
        memcpy(&u, &f, sizeof u);
        *bits = u;
        return 1;
    case DUET_DTYPE_F64: memcpy(bits, &value, sizeof *bits); return 1;
    case DUET_DTYPE_I32:
        if (!cpu_to_u32(value, &u)) return 0;
        *bits = u;
        return 1;
    case DUET_DTYPE_F16: *bits = narrow_float(value, 5, 10); return 1;
    case DUET_DTYPE_BF16: *bits = narrow_float(value, 8, 7); return 1;
    case DUET_DTYPE_I8:
        if (!(value >= -128.0 && value <= 127.0) || (double)(int)value != value) return 0;
        *bits = (uint8_t)(int8_t)(int)value;
        return 1;
    case DUET_DTYPE_F8E4M3:
    case DUET_DTYPE_F8E5M2: return 0; /* duet_fill refuses them before the backend */
    }
    return 0;
}

static size_t dtype_bytes(duet_dtype dtype)
{
    switch (dtype) {
    case DUET_DTYPE_F64: return 8;
    case DUET_DTYPE_F32:
    case DUET_DTYPE_I32: return 4;
    case DUET_DTYPE_F16:
    case DUET_DTYPE_BF16: return 2;
    case DUET_DTYPE_I8:
    case DUET_DTYPE_F8E4M3:
    case DUET_DTYPE_F8E5M2: return 1;
    }
    return 0;
}

/* AUTO: rows cut into pieces of at most EW_PIECE elements, so that one long row (a packed
 * matrix) is still shared among threads. */
#define EW_PIECE ((int64_t)1 << 14)

static void ew_auto(const dt_elementwise *e, cpu_row_fn row, void *job)
{
    const int64_t pieces = dt_ceil_div(e->cols, EW_PIECE);
    const int64_t tasks = e->batch * e->rows * pieces;
    const int nt = cpu_threads_for(e->batch * e->rows * e->cols);
    (void)nt;
    CPU_PARALLEL_FOR(x, tasks, {
        const int64_t r = x / pieces, j0 = x % pieces * EW_PIECE;
        row(job, r / e->rows, r % e->rows, j0, min64(j0 + EW_PIECE, e->cols));
    });
}

/* Whether view is packed rows (unit columns, rows of exactly cols elements). */
static int packed_rows(const dt_view *v, int64_t cols) { return v->cs == 1 && v->rs == cols; }

duet_status be_elementwise(dt_context *ctx, void *stream, const dt_elementwise *e,
                           const dt_plan *plan, duet_launch_info *info)
{
    (void)ctx;
    (void)stream;
    static const char *const op_names[] = {"scale", "add", "fill"};
    static const char *const funcs[] = {"duet_scale", "duet_add", "duet_fill"};
    if (e->kind != DT_EW_SCALE && e->kind != DT_EW_ADD && e->kind != DT_EW_FILL)
        return dt_fail(DUET_ERROR_UNSUPPORTED, "be_elementwise", "unknown elementwise op %d",
                       (int)e->kind);
    const char *op = op_names[e->kind], *func = funcs[e->kind];
    const char *dt = duet_dtype_name(e->dtype);

    ew_job job;
    memset(&job, 0, sizeof job);
    job.e = e;
    cpu_row_fn row = NULL;
    if (e->kind == DT_EW_FILL) {
        if (!fill_bits(e->dtype, e->value, &job.fill))
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                           "%.17g is not exactly representable in %s", e->value, dt);
        switch (dtype_bytes(e->dtype)) {
        case 1: row = fill_row_8; break;
        case 2: row = fill_row_16; break;
        case 4: row = fill_row_32; break;
        default: row = fill_row_64; break;
        }
    } else {
        const int add = e->kind == DT_EW_ADD;
        switch (e->dtype) {
        case DUET_DTYPE_F32:
            job.alpha.f32 = (float)e->alpha;
            job.beta.f32 = (float)e->beta;
            row = add ? add_row_f32 : scale_row_f32;
            break;
        case DUET_DTYPE_F64:
            job.alpha.f64 = e->alpha;
            job.beta.f64 = e->beta;
            row = add ? add_row_f64 : scale_row_f64;
            break;
        case DUET_DTYPE_I32:
            if (!cpu_to_u32(e->alpha, &job.alpha.u32) ||
                (add && !cpu_to_u32(e->beta, &job.beta.u32)))
                return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                               "i32 needs integral factors in the int32 range (got %.17g and %.17g)",
                               e->alpha, add ? e->beta : 0.0);
            row = add ? add_row_i32 : scale_row_i32;
            break;
        default:
            return dt_fail(DUET_ERROR_UNSUPPORTED, func, "%s is f32, f64 or i32 only (got %s)", op,
                           dt);
        }
    }
    if (e->rows <= 0 || e->cols <= 0 || e->batch <= 0) {
        cpu_fill_info(info, op, dt, plan);
        if (info) info->launches = 0;
        return DUET_SUCCESS;
    }

    int64_t tx, ty, tz;
    duet_status st;
    dt_elementwise flat;
    switch (plan->algo) {
    case DUET_ALGO_NAIVE:
        cpu_walk(e->batch, e->rows, e->cols, e->batch, e->rows, e->cols, 1, row, &job);
        break;
    case DUET_ALGO_GRID_STRIDE:
        st = cpu_grid_threads(plan, func, &tx, &ty, &tz);
        if (st != DUET_SUCCESS) return st;
        cpu_walk(e->batch, e->rows, e->cols, tz, ty, tx, 1, row, &job);
        break;
    case DUET_ALGO_AUTO:
        /* Packed matrices are one long row each: one vector loop instead of many short. */
        flat = *e;
        if (packed_rows(&e->c, e->cols) &&
            (e->kind != DT_EW_ADD ||
             (packed_rows(&e->a, e->cols) && packed_rows(&e->b, e->cols)))) {
            flat.cols = e->rows * e->cols;
            flat.rows = 1;
        }
        job.e = &flat;
        ew_auto(&flat, row, &job);
        break;
    default:
        return dt_fail(DUET_ERROR_UNSUPPORTED, func, "%s has no %s algorithm", op,
                       duet_algorithm_name(plan->algo));
    }
    /* AUTO shares fixed pieces of the rows among threads: a grid-stride loop in effect. */
    cpu_fill_info(info, op, dt, plan);
    return DUET_SUCCESS;
}
