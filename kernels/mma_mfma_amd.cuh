/* mma_mfma_amd.cuh - AMD's atoms for mma_atom.cuh: wave64 MFMA on CDNA (gfx908, gfx90a, gfx94x). */
#ifndef DUET_KERNELS_MMA_MFMA_AMD_CUH
#define DUET_KERNELS_MMA_MFMA_AMD_CUH

#include <stdint.h>
#include <type_traits>

/*
 * v_mfma_*_32x32x*: a 32 x 32 block per wavefront of 64 lanes. In the AMD matrix instruction
 * layout (CDNA ISA, "Dependent Matrix Multiply"), with r = lane % 32 and h = lane / 32:
 *   A: lane holds row r, k words [h * KW/2, (h + 1) * KW/2)   (one or two words)
 *   B: lane holds column r, the same k words
 *   C: element i of a lane is row 8 * (i / 4) + 4 * h + i % 4, column r  (16 per lane)
 * f16 (32x32x8f16, gfx908+) and bf16 (32x32x8bf16_1k, gfx90a+) take 4 elements = 2 words;
 * i8 takes 4 elements = 1 word (32x32x8i8, gfx908/gfx90a) or 8 = 2 words (32x32x16_i8, gfx94x).
 * RDNA (gfx10-12) has no MFMA, and tf32 (xf32 on gfx94x only) is not used: those run duet's
 * SIMT kernel (gemm_lowp_simt.cuh), and TF32 modes run exact f32 there.
 */

#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define DUET_MFMA_GFX94 1
#else
#define DUET_MFMA_GFX94 0
#endif
#if defined(__gfx908__) || defined(__gfx90a__) || DUET_MFMA_GFX94
#define DUET_MFMA_F16 1
#else
#define DUET_MFMA_F16 0
#endif
#if defined(__gfx90a__) || DUET_MFMA_GFX94
#define DUET_MFMA_BF16 1
#else
#define DUET_MFMA_BF16 0
#endif

typedef float duet_mfma_f32x16 __attribute__((ext_vector_type(16)));
typedef int duet_mfma_i32x16 __attribute__((ext_vector_type(16)));
typedef _Float16 duet_mfma_f16x4 __attribute__((ext_vector_type(4)));
typedef short duet_mfma_i16x4 __attribute__((ext_vector_type(4)));

template <int KIND> struct duet_mfma_traits {
    typedef float acc_t;
    static constexpr bool available = KIND == DUET_MMA_F16 ? DUET_MFMA_F16 != 0
                                      : KIND == DUET_MMA_BF16 ? DUET_MFMA_BF16 != 0
                                                              : false;
    static constexpr int KW = 4;
};
template <> struct duet_mfma_traits<DUET_MMA_I8> {
    typedef int32_t acc_t;
    static constexpr bool available = DUET_MFMA_F16 != 0; /* every MFMA target has an i8 form */
    static constexpr int KW = DUET_MFMA_GFX94 ? 4 : 2;
};

template <int KIND>
struct duet_mma_atom {
    typedef duet_mfma_traits<KIND> traits;
    static constexpr bool available = traits::available;
    static constexpr int M = 32, N = 32, KW = traits::KW;
    static constexpr int A_REGS = KW / 2, B_REGS = KW / 2, C_REGS = 16;
    typedef typename traits::acc_t acc_t;
    /* The accumulator fragment is the instruction's own vector type: kept whole, it stays in
     * the accumulation registers (AGPRs on gfx908/gfx90a) with no copy per instruction. */
    typedef typename std::conditional<KIND == DUET_MMA_I8, duet_mfma_i32x16, duet_mfma_f32x16>::type
        cfrag;

    /* LDS is addressed through ordinary pointers. */
    typedef const uint32_t *saddr;
    static DUET_INLINE saddr to_saddr(const uint32_t *p) { return p; }
    static DUET_INLINE saddr offset(saddr s, int words) { return s + words; }

    static DUET_INLINE void load_rows(uint32_t (&r)[A_REGS], const uint32_t *s, int pitch,
                                      int lane)
    {
        const uint32_t *p = s + (lane & 31) * pitch + (lane >> 5) * A_REGS;
#pragma unroll
        for (int i = 0; i < A_REGS; ++i) r[i] = p[i];
    }
    static DUET_INLINE void load_a(uint32_t (&a)[A_REGS], const uint32_t *s, int pitch, int lane)
    {
        load_rows(a, s, pitch, lane);
    }
    static DUET_INLINE void load_b(uint32_t (&b)[B_REGS], const uint32_t *s, int pitch, int lane)
    {
        load_rows(b, s, pitch, lane);
    }

    static DUET_INLINE void mma(cfrag &c, const uint32_t (&a)[A_REGS], const uint32_t (&b)[B_REGS])
    {
#if DUET_MFMA_F16
        if constexpr (KIND == DUET_MMA_I8) {
#if DUET_MFMA_GFX94
            long av, bv;
            __builtin_memcpy(&av, a, 8);
            __builtin_memcpy(&bv, b, 8);
            c = __builtin_amdgcn_mfma_i32_32x32x16_i8(av, bv, c, 0, 0, 0);
#else
            c = __builtin_amdgcn_mfma_i32_32x32x8i8((int)a[0], (int)b[0], c, 0, 0, 0);
#endif /* DUET_MFMA_GFX94 */
        } else if constexpr (KIND == DUET_MMA_F16) {
            duet_mfma_f16x4 av, bv;
            __builtin_memcpy(&av, a, 8);
            __builtin_memcpy(&bv, b, 8);
            c = __builtin_amdgcn_mfma_f32_32x32x8f16(av, bv, c, 0, 0, 0);
        }
#if DUET_MFMA_BF16
        else if constexpr (KIND == DUET_MMA_BF16) {
            duet_mfma_i16x4 av, bv;
            __builtin_memcpy(&av, a, 8);
            __builtin_memcpy(&bv, b, 8);
            c = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(av, bv, c, 0, 0, 0);
        }
#endif /* DUET_MFMA_BF16 */
#else
        (void)c;
        (void)a;
        (void)b;
#endif /* DUET_MFMA_F16 */
    }

    static DUET_INLINE void c_pos(int lane, int i, int &row, int &col)
    {
        row = 8 * (i >> 2) + 4 * (lane >> 5) + (i & 3);
        col = lane & 31;
    }
};

#endif /* DUET_KERNELS_MMA_MFMA_AMD_CUH */
