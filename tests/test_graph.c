/* test_graph.c - duet's ops captured into a CUDA graph on the application's stream, replayed. */
#include "harness.h"

#include <cuda_runtime.h>

/*
 * The application owns the stream and the memory (cudaStreamCreate, cudaMalloc); duet works on
 * them through duet_stream_wrap and duet_buffer_wrap. One sequence (copy, memset, fill, scale,
 * gemm, transpose, add) runs uncaptured for the reference, then is captured with
 * cudaStreamBeginCapture and replayed REPLAYS times; after each replay every output must equal
 * the uncaptured result bit for bit (the outputs are scribbled over between replays, so a
 * replay that did nothing would be caught). Blocking duet calls made during the capture must
 * fail cleanly and leave the capture intact.
 */

#define REPLAYS 100
enum { M = 96, N = 80, K = 64 };

#define CU(call)                                                                             \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                    \
                    cudaGetErrorString(e_));                                                 \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

typedef struct outputs {
    duet_buffer *c, *t, *d, *e, *z;
} outputs;

static duet_buffer *wrap(duet_context *ctx, void *p, size_t bytes)
{
    duet_buffer *b = NULL;
    DT_OK(duet_buffer_wrap(ctx, p, bytes, &b));
    if (!b) exit(1);
    return b;
}

/* The captured sequence: D = T + 0.5 * D0 with T = (A B)^T; E = 3 * fill(1.5); Z = 0. */
static duet_status sequence(duet_stream *s, duet_buffer *a, duet_buffer *b, duet_buffer *d0,
                            const outputs *o)
{
    duet_matrix A = duet_matrix_make(a, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, M, K);
    duet_matrix B = duet_matrix_make(b, DUET_DTYPE_F32, DUET_LAYOUT_COL_MAJOR, K, N);
    duet_matrix C = duet_matrix_make(o->c, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, M, N);
    duet_matrix T = duet_matrix_make(o->t, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, N, M);
    duet_matrix D = duet_matrix_make(o->d, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, N, M);
    duet_matrix E = duet_matrix_make(o->e, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, M, N);
    duet_status st = duet_buffer_copy(s, o->d, 0, d0, 0, (size_t)N * M * sizeof(float));
    if (st == DUET_SUCCESS) st = duet_buffer_memset(s, o->z, 0, 0, 4096);
    if (st == DUET_SUCCESS) st = duet_fill(s, 1.5, &E, NULL);
    if (st == DUET_SUCCESS) st = duet_scale(s, 3.0, &E, NULL);
    if (st == DUET_SUCCESS)
        st = duet_gemm(s, DUET_OP_N, DUET_OP_N, 1.0, &A, &B, 0.0, &C, NULL);
    if (st == DUET_SUCCESS) st = duet_transpose(s, &C, &T, NULL);
    if (st == DUET_SUCCESS) st = duet_add(s, 1.0, &T, 0.5, &D, &D, NULL);
    return st;
}

typedef struct host_out {
    float c[M * N], t[N * M], d[N * M], e[M * N];
    unsigned char z[4096];
} host_out;

static void download(cudaStream_t us, void *const dev[5], host_out *h)
{
    CU(cudaMemcpyAsync(h->c, dev[0], sizeof h->c, cudaMemcpyDeviceToHost, us));
    CU(cudaMemcpyAsync(h->t, dev[1], sizeof h->t, cudaMemcpyDeviceToHost, us));
    CU(cudaMemcpyAsync(h->d, dev[2], sizeof h->d, cudaMemcpyDeviceToHost, us));
    CU(cudaMemcpyAsync(h->e, dev[3], sizeof h->e, cudaMemcpyDeviceToHost, us));
    CU(cudaMemcpyAsync(h->z, dev[4], sizeof h->z, cudaMemcpyDeviceToHost, us));
    CU(cudaStreamSynchronize(us));
}

static void scribble(cudaStream_t us, void *const dev[5], const size_t bytes[5], int round)
{
    for (int i = 0; i < 5; i++) CU(cudaMemsetAsync(dev[i], 0x40 + round % 64, bytes[i], us));
}

int main(void)
{
    duet_context *ctx = dt_open_or_skip();
    dt_seed(11);
    cudaStream_t us;
    CU(cudaStreamCreateWithFlags(&us, cudaStreamNonBlocking));
    duet_stream *s = NULL;
    DT_OK(duet_stream_wrap(ctx, us, &s));
    if (!s) return dt_finish("test_graph");

    const size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
    float *ha = malloc(na * sizeof *ha), *hb = malloc(nb * sizeof *hb),
          *hd = malloc(nc * sizeof *hd);
    if (!ha || !hb || !hd) return 1;
    for (size_t i = 0; i < na; i++) ha[i] = (float)dt_rand_uniform(-1, 1);
    for (size_t i = 0; i < nb; i++) hb[i] = (float)dt_rand_uniform(-1, 1);
    for (size_t i = 0; i < nc; i++) hd[i] = (float)dt_rand_uniform(-1, 1);

    void *da, *db, *dd0, *dev[5];
    const size_t bytes[5] = {nc * 4, nc * 4, nc * 4, nc * 4, 4096};
    CU(cudaMalloc(&da, na * 4));
    CU(cudaMalloc(&db, nb * 4));
    CU(cudaMalloc(&dd0, nc * 4));
    for (int i = 0; i < 5; i++) CU(cudaMalloc(&dev[i], bytes[i]));
    CU(cudaMemcpy(da, ha, na * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(db, hb, nb * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(dd0, hd, nc * 4, cudaMemcpyHostToDevice));
    duet_buffer *a = wrap(ctx, da, na * 4), *b = wrap(ctx, db, nb * 4), *d0 = wrap(ctx, dd0, nc * 4);
    outputs o = {wrap(ctx, dev[0], bytes[0]), wrap(ctx, dev[1], bytes[1]),
                 wrap(ctx, dev[2], bytes[2]), wrap(ctx, dev[3], bytes[3]),
                 wrap(ctx, dev[4], bytes[4])};

    /* Uncaptured reference (this run also sizes any workspace the ops need). */
    static host_out ref, got;
    scribble(us, dev, bytes, 1);
    DT_OK(sequence(s, a, b, d0, &o));
    download(us, dev, &ref);
    DT_CHECK(ref.e[0] == 4.5f && ref.z[4095] == 0, "uncaptured fill/scale/memset: %g %d",
             ref.e[0], ref.z[4095]);

    /* Capture. */
    scribble(us, dev, bytes, 2);
    duet_event *ev = NULL;
    DT_OK(duet_event_create(ctx, &ev));
    CU(cudaStreamSynchronize(us));
    CU(cudaStreamBeginCapture(us, cudaStreamCaptureModeGlobal));
    DT_OK(sequence(s, a, b, d0, &o));
    /* Blocking calls refuse, naming the capture, and leave it intact. */
    float probe[4];
    DT_FAILS(duet_stream_synchronize(s), DUET_ERROR_INVALID_ARGUMENT, "capturing");
    DT_FAILS(duet_buffer_read(s, o.c, 0, probe, sizeof probe), DUET_ERROR_INVALID_ARGUMENT,
             "capturing");
    DT_FAILS(duet_buffer_write(s, o.c, 0, probe, sizeof probe), DUET_ERROR_INVALID_ARGUMENT,
             "capturing");
    DT_FAILS(duet_context_synchronize(ctx), DUET_ERROR_INVALID_ARGUMENT, "capturing");
    DT_FAILS(duet_stream_destroy(s), DUET_ERROR_INVALID_ARGUMENT, "capturing");
    DT_FAILS(duet_context_destroy(ctx), DUET_ERROR_INVALID_ARGUMENT, "capturing");
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    CU(cudaStreamIsCapturing(us, &cs));
    DT_CHECK(cs == cudaStreamCaptureStatusActive, "capture status %d after the refused calls",
             (int)cs);
    cudaGraph_t graph;
    CU(cudaStreamEndCapture(us, &graph));
    size_t nodes = 0;
    CU(cudaGraphGetNodes(graph, NULL, &nodes));
    DT_CHECK(nodes >= 7, "the graph has %zu nodes, wanted at least 7", nodes);
    cudaGraphExec_t exec;
    CU(cudaGraphInstantiate(&exec, graph, 0));

    /* Nothing ran during the capture: the outputs still hold the scribble. */
    download(us, dev, &got);
    DT_CHECK(got.z[0] == 0x42, "the capture ran work (memset output %d)", got.z[0]);

    int mismatched = 0;
    for (int r = 0; r < REPLAYS; r++) {
        scribble(us, dev, bytes, 3 + r);
        CU(cudaGraphLaunch(exec, us));
        download(us, dev, &got);
        if (memcmp(&got, &ref, sizeof ref) != 0) mismatched++;
    }
    DT_CHECK(mismatched == 0, "%d of %d replays differ from the uncaptured run", mismatched,
             REPLAYS);

    /* An event recorded during a capture marks a node, not work: waiting for it refuses. (A
     * capture of its own, so that the graph above does not depend on it.) */
    CU(cudaStreamBeginCapture(us, cudaStreamCaptureModeGlobal));
    DT_OK(duet_fill(s, 2.0, &(duet_matrix){o.e, 0, M, N, N, DUET_DTYPE_F32,
                                            DUET_LAYOUT_ROW_MAJOR, 1, 0},
                    NULL));
    DT_OK(duet_event_record(ev, s));
    DT_FAILS(duet_event_synchronize(ev), DUET_ERROR_INVALID_ARGUMENT, "graph");
    DT_FAILS(duet_event_query(ev), DUET_ERROR_INVALID_ARGUMENT, "graph");
    cudaGraph_t graph2 = NULL;
    const cudaError_t end2 = cudaStreamEndCapture(us, &graph2);
    DT_CHECK(end2 == cudaSuccess, "second capture: %s", cudaGetErrorString(end2));
    if (graph2) CU(cudaGraphDestroy(graph2));
    (void)cudaGetLastError();

    /* After the capture the same calls work again. */
    DT_OK(duet_event_record(ev, s));
    DT_OK(duet_event_synchronize(ev));
    DT_OK(duet_event_query(ev));
    DT_OK(duet_stream_synchronize(s));
    DT_OK(duet_buffer_read(s, o.c, 0, probe, sizeof probe));
    DT_CHECK(memcmp(probe, ref.c, sizeof probe) == 0, "read after the capture");

    CU(cudaGraphExecDestroy(exec));
    CU(cudaGraphDestroy(graph));
    DT_OK(duet_event_destroy(ev));
    DT_OK(duet_stream_destroy(s));
    DT_OK(duet_context_destroy(ctx));
    /* duet forgot the stream and the memory; both are still the application's. */
    CU(cudaMemsetAsync(dev[0], 0, bytes[0], us));
    CU(cudaStreamSynchronize(us));
    CU(cudaStreamDestroy(us));
    for (int i = 0; i < 5; i++) CU(cudaFree(dev[i]));
    CU(cudaFree(da));
    CU(cudaFree(db));
    CU(cudaFree(dd0));
    free(ha);
    free(hb);
    free(hd);
    return dt_finish("test_graph");
}
