/* raw_launch.cu - duet-bench's yardstick for call overhead: a raw launch of a trivial kernel. */
#include <cuda_runtime.h>

/* Does nothing visible (n is 0), but takes a pointer and a size like a real kernel. */
__global__ void duet_bench_trivial_kernel(float *p, int n)
{
    if ((int)threadIdx.x < n) p[threadIdx.x] = 0.0f;
}

/* One launch on the given stream, nothing else (the errors are read once, afterwards). */
extern "C" void duet_bench_raw_launch(void *stream, float *p)
{
    duet_bench_trivial_kernel<<<1, 32, 0, (cudaStream_t)stream>>>(p, 0);
}

/* The same launch with the runtime calls duet's GPU backend makes around each of its launches
 * (ask for the current device, clear and then read the last error): the difference between this
 * row and a duet op is the common layer's own cost. */
extern "C" void duet_bench_raw_launch_checked(void *stream, float *p, int device)
{
    int current = -1;
    if (cudaGetDevice(&current) != cudaSuccess || current != device) (void)cudaSetDevice(device);
    (void)cudaGetLastError();
    duet_bench_trivial_kernel<<<1, 32, 0, (cudaStream_t)stream>>>(p, 0);
    (void)cudaGetLastError();
}

/* 0 when every raw launch so far went well. */
extern "C" int duet_bench_raw_check(void) { return cudaGetLastError() == cudaSuccess ? 0 : 1; }
