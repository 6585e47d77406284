/* mma_sync_nv.cuh - NVIDIA's atoms for mma_atom.cuh: warp-wide mma.sync (sm_80 and newer). */
#ifndef DUET_KERNELS_MMA_SYNC_NV_CUH
#define DUET_KERNELS_MMA_SYNC_NV_CUH

#include <stdint.h>

/*
 * mma.sync.aligned.m16n8kK: K = 16 (f16, bf16), 8 (tf32), 32 (i8, e4m3, e5m2) elements, which
 * is 8 words for every kind. Counted in words, the four kinds share one fragment layout (PTX ISA,
 * "Matrix Fragments for mma.m16n8k16 / m16n8k8 / m16n8k32"): with g = lane / 4, t = lane % 4,
 *   A: a0 = (g, t), a1 = (g + 8, t), a2 = (g, t + 4), a3 = (g + 8, t + 4)   (row, word)
 *   B: b0 = (g, t), b1 = (g, t + 4)                                            (n, word)
 *   C: c0 = (g, 2t), c1 = (g, 2t + 1), c2 = (g + 8, 2t), c3 = (g + 8, 2t + 1)  (row, col)
 * which is exactly what ldmatrix delivers for 8 x 4-word matrices (lane l receives word l % 4
 * of row l / 4), so one ldmatrix.x4 loads an A fragment and one .x2 a B fragment whatever the
 * kind. Rows of 16-byte-aligned starts are all ldmatrix needs.
 */

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)
#define DUET_MMA_SYNC 1
#else
#define DUET_MMA_SYNC 0
#endif /* sm_80+ */

/* The 8-bit float kinds (m16n8k32 .e4m3/.e5m2) exist from sm_89 on. */
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 890)
#define DUET_MMA_SYNC_F8 1
#else
#define DUET_MMA_SYNC_F8 0
#endif /* sm_89+ */

/* ldmatrix from a shared-window byte address (converted once per tile by the kernel, not per
 * load: the generic-to-shared conversion per fragment cost integer issue slots). */
DUET_INLINE void duet_ldmatrix_x4(uint32_t (&r)[4], uint32_t s)
{
#if DUET_MMA_SYNC
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(s));
#else
    (void)s;
    r[0] = r[1] = r[2] = r[3] = 0;
#endif /* DUET_MMA_SYNC */
}

/* The .trans forms: each 8 x 8 matrix of 16-bit elements is delivered transposed. */
DUET_INLINE void duet_ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t s)
{
#if DUET_MMA_SYNC
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(s));
#else
    (void)s;
    r[0] = r[1] = r[2] = r[3] = 0;
#endif /* DUET_MMA_SYNC */
}

DUET_INLINE void duet_ldmatrix_x2_trans(uint32_t (&r)[2], uint32_t s)
{
#if DUET_MMA_SYNC
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(s));
#else
    (void)s;
    r[0] = r[1] = 0;
#endif /* DUET_MMA_SYNC */
}

DUET_INLINE void duet_ldmatrix_x2(uint32_t (&r)[2], uint32_t s)
{
#if DUET_MMA_SYNC
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(s));
#else
    (void)s;
    r[0] = r[1] = 0;
#endif /* DUET_MMA_SYNC */
}

template <int KIND> struct duet_mma_nv_acc {
    typedef float type;
};
template <> struct duet_mma_nv_acc<DUET_MMA_I8> {
    typedef int32_t type;
};

template <int KIND>
struct duet_mma_atom {
    static constexpr bool available =
        duet_mma_is_f8(KIND) ? DUET_MMA_SYNC_F8 != 0 : DUET_MMA_SYNC != 0;
    static constexpr int M = 16, N = 8, KW = 8;
    static constexpr int A_REGS = 4, B_REGS = 2, C_REGS = 4;
    typedef typename duet_mma_nv_acc<KIND>::type acc_t;
    typedef acc_t cfrag[4]; /* the accumulator fragment: c0..c3 */

    /* Shared memory is addressed through the 32-bit shared window (bytes). */
    typedef uint32_t saddr;
    static DUET_INLINE saddr to_saddr(const uint32_t *p)
    {
#if DUET_MMA_SYNC
        return (saddr)__cvta_generic_to_shared(p);
#else
        (void)p;
        return 0;
#endif /* DUET_MMA_SYNC */
    }
    static DUET_INLINE saddr offset(saddr s, int words) { return s + (saddr)words * 4u; }

    /* Lanes 0-7 address rows 0-7 of words 0-3, 8-15 rows 8-15, 16-23 rows 0-7 of words 4-7,
     * 24-31 rows 8-15 of words 4-7: the order of a0..a3. */
    static DUET_INLINE void load_a(uint32_t (&a)[4], saddr s, int pitch, int lane)
    {
        duet_ldmatrix_x4(a, offset(s, ((lane & 7) + (lane & 8)) * pitch + (lane >> 4) * 4));
    }
    /* Lanes 0-7 address n rows 0-7 of words 0-3, lanes 8-15 words 4-7 (b0, b1). */
    static DUET_INLINE void load_b(uint32_t (&b)[2], saddr s, int pitch, int lane)
    {
        duet_ldmatrix_x2(b, offset(s, (lane & 7) * pitch + ((lane >> 3) & 1) * 4));
    }

    /* 16-bit kinds only: the operand in shared memory m- (n-) major, rows of k with a pitch of
     * `pitch` words, s at element (k 0, m 0) of the atom. ldmatrix.trans delivers (k 2t..2t+1,
     * m g) pairs: a0 from k 0-7 x m 0-7, a1 k 0-7 x m 8-15, a2 k 8-15 x m 0-7, a3 k 8-15 x
     * m 8-15; b0 from k 0-7 x n 0-7, b1 k 8-15 x n 0-7. */
    static DUET_INLINE void load_a_mn(uint32_t (&a)[4], saddr s, int pitch, int lane)
    {
        duet_ldmatrix_x4_trans(a, offset(s, ((lane & 7) + ((lane >> 4) & 1) * 8) * pitch +
                                                ((lane >> 3) & 1) * 4));
    }
    static DUET_INLINE void load_b_mn(uint32_t (&b)[2], saddr s, int pitch, int lane)
    {
        duet_ldmatrix_x2_trans(b, offset(s, ((lane & 7) + ((lane >> 3) & 1) * 8) * pitch));
    }

    /* The pipelined kernel's loads (gemm_tc.cuh, NVIDIA only): two n-atoms of B per
     * ldmatrix.x4, from addresses whose per-lane part is made once per tile (*_lane, in words)
     * and whose per-atom part is a constant. B, k-major: lanes 0-7 n rows 0-7 words 0-3 (b0 of
     * atom j), 8-15 the same rows words 4-7 (b1 of j), 16-31 the same for n rows 8-15 (atom
     * j + 1). B n-major (.trans): lanes 0-15 k rows 0-15 at n 0 (b0, b1 of j), 16-31 at n 8. */
    static DUET_HOST_DEVICE constexpr int a_lane(int pitch, int lane)
    {
        return ((lane & 7) + (lane & 8)) * pitch + (lane >> 4) * 4;
    }
    static DUET_HOST_DEVICE constexpr int a_mn_lane(int pitch, int lane)
    {
        return ((lane & 7) + ((lane >> 4) & 1) * 8) * pitch + ((lane >> 3) & 1) * 4;
    }
    static DUET_HOST_DEVICE constexpr int b2_lane(int pitch, int lane)
    {
        return ((lane & 7) + ((lane >> 4) & 1) * 8) * pitch + ((lane >> 3) & 1) * 4;
    }
    static DUET_HOST_DEVICE constexpr int b2_mn_lane(int pitch, int lane)
    {
        return ((lane & 7) + ((lane >> 3) & 1) * 8) * pitch + ((lane >> 4) & 1) * 4;
    }
    template <bool TRANS> static DUET_INLINE void load_a_at(uint32_t (&a)[4], saddr s)
    {
        if constexpr (TRANS)
            duet_ldmatrix_x4_trans(a, s);
        else
            duet_ldmatrix_x4(a, s);
    }
    template <bool TRANS>
    static DUET_INLINE void load_b2_at(uint32_t (&b0)[2], uint32_t (&b1)[2], saddr s)
    {
        uint32_t r[4];
        if constexpr (TRANS)
            duet_ldmatrix_x4_trans(r, s);
        else
            duet_ldmatrix_x4(r, s);
        b0[0] = r[0];
        b0[1] = r[1];
        b1[0] = r[2];
        b1[1] = r[3];
    }

    static DUET_INLINE void mma(cfrag &c, const uint32_t (&a)[4], const uint32_t (&b)[2])
    {
#if DUET_MMA_SYNC
        if constexpr (KIND == DUET_MMA_F16) {
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                         "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                         : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        } else if constexpr (KIND == DUET_MMA_BF16) {
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                         "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                         : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        } else if constexpr (KIND == DUET_MMA_TF32) {
            asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                         "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                         : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        } else if constexpr (duet_mma_is_f8(KIND)) {
#if DUET_MMA_SYNC_F8
            /* Each of the 32 products of an 8-bit float pair is exact in f32. */
#define DUET_MMA_F8_ASM(TA, TB)                                                                    \
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." TA "." TB ".f32 {%0,%1,%2,%3}, "         \
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                                        \
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                                  \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
            if constexpr (KIND == DUET_MMA_F8_44)
                DUET_MMA_F8_ASM("e4m3", "e4m3");
            else if constexpr (KIND == DUET_MMA_F8_45)
                DUET_MMA_F8_ASM("e4m3", "e5m2");
            else if constexpr (KIND == DUET_MMA_F8_54)
                DUET_MMA_F8_ASM("e5m2", "e4m3");
            else
                DUET_MMA_F8_ASM("e5m2", "e5m2");
#undef DUET_MMA_F8_ASM
#else
            (void)c, (void)a, (void)b;
#endif /* DUET_MMA_SYNC_F8 */
        } else {
            /* Without .satfinite the s32 sums wrap modulo 2^32, as duet's i32 GEMM defines. */
            asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, "
                         "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                         : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        }
#else
        (void)c;
        (void)a;
        (void)b;
#endif /* DUET_MMA_SYNC */
    }

    static DUET_INLINE void c_pos(int lane, int i, int &row, int &col)
    {
        row = (lane >> 2) + (i >> 1) * 8;
        col = (lane & 3) * 2 + (i & 1);
    }
};

#endif /* DUET_KERNELS_MMA_SYNC_NV_CUH */
