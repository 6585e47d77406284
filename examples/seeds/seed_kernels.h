/* seed_kernels.h - the seeds' kernel sources that both a seed program and the conformance suite
 * compile at run time (tests/test_module.c), kept in one place so the two cannot drift apart. */
#ifndef DUET_SEED_KERNELS_H
#define DUET_SEED_KERNELS_H

/* The PyCUDA notebook's global-memory kernel, exactly as the notebook has it (its comment
 * included). */
static const char pycuda_naive_matmul_src[] =
    "__global__ void matmul(float *A, float *B, float *C, int N) {\n"
    "    // TODO: Implement matrix multiplication kernel\n"
    "    // blockIdx, blockDim, threadIdx, gridDim\n"
    "    float sum = 0;\n"
    "    int2 global_id = make_int2(blockIdx.x * blockDim.x + threadIdx.x,\n"
    "                               blockIdx.y * blockDim.y + threadIdx.y);\n"
    "\n"
    "    if (global_id.x >= N || global_id.y >= N) {\n"
    "        return;\n"
    "    }\n"
    "    \n"
    "    for (int i = 0; i < N; i++) {\n"
    "        int aij = global_id.y * N + i;\n"
    "        int bij = i * N + global_id.x;\n"
    "        sum  += A[aij] * B[bij];\n"
    "    }\n"
    "\n"
    "    int cij = global_id.y * N + global_id.x;\n"
    "    C[cij] = sum;\n"
    "}\n";

/* The PyCUDA notebook's 8x8 shared-memory ("SLM") kernel, exactly as the notebook has it. */
static const char pycuda_shared_matmul_src[] =
    "    #define THREAD_INDEX (threadIdx.y * blockDim.x + threadIdx.x)\n"
    "    #define BLOCK_LENGTH 8 * 8\n"
    "\n"
    "    __global__ void matmul(float *A, float *B, float *C, int *debug, int N) {\n"
    "        float sum = 0;\n"
    "        int2 global_id = make_int2(blockIdx.x * blockDim.x + threadIdx.x,\n"
    "                                   blockIdx.y * blockDim.y + threadIdx.y);\n"
    "                                   \n"
    "        if (global_id.x >= N || global_id.y >= N) {\n"
    "            return;\n"
    "        }\n"
    "                \n"
    "        //extern __shared__ float slm[];\n"
    "        __shared__ float slm_A[BLOCK_LENGTH];\n"
    "        __shared__ float slm_B[BLOCK_LENGTH];\n"
    "        \n"
    "        for (int b = 0; b < gridDim.x; b++) {\n"
    "            int2 gidA = make_int2(b * blockDim.x + threadIdx.x,  blockIdx.y * blockDim.y + "
    "threadIdx.y);\n"
    "            int2 gidB = make_int2(blockIdx.x * blockDim.x + threadIdx.x,  b * blockDim.y + "
    "threadIdx.y);\n"
    "                        \n"
    "            slm_A[THREAD_INDEX] = A[gidA.y * N + gidA.x];\n"
    "            slm_B[THREAD_INDEX] = B[gidB.y * N + gidB.x];\n"
    "                \n"
    "            __syncthreads();\n"
    "            \n"
    "            for (int i = 0; i < blockDim.x; i++) {\n"
    "                sum += slm_A[blockDim.x * threadIdx.y + i] * slm_B[blockDim.x * i + "
    "threadIdx.x];\n"
    "            }            \n"
    "            \n"
    "            __syncthreads();\n"
    "        }\n"
    "        \n"
    "        C[global_id.y * N + global_id.x] = sum;\n"
    "    }\n";

/* The DLI notebook's add_2D_coordinates_stride, with its variable names: cuda.grid(2) is
 * (x, y), so grid_y is the x index and stride_y the x extent of the grid. A string literal, so
 * that it can be joined with other kernels into one module. */
#define DLI_ADD_2D_COORDINATES_STRIDE_SRC \
    "__global__ void add_2D_coordinates_stride(int *A, int rows, int cols) {\n" \
    "    int grid_y = (int)duet_global_idx_x();\n" \
    "    int grid_x = (int)duet_global_idx_y();\n" \
    "    int stride_y = (int)duet_global_size_x();\n" \
    "    int stride_x = (int)duet_global_size_y();\n" \
    "    for (int data_i = grid_x; data_i < rows; data_i += stride_x)\n" \
    "        for (int data_j = grid_y; data_j < cols; data_j += stride_y)\n" \
    "            A[data_i * cols + data_j] = grid_x + grid_y;\n" \
    "}\n"

#endif /* DUET_SEED_KERNELS_H */
