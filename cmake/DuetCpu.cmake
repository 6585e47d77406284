# DuetCpu.cmake - the host backend: plain C, optionally OpenMP and a CBLAS.
target_sources(duet PRIVATE
  src/cpu/backend_cpu.c
  src/cpu/gemm_cpu.c
  src/cpu/gemm_blas_map.c
  src/cpu/gemm_lowp_cpu.c
  src/cpu/gemm_epilogue_cpu.c
  src/cpu/copy_cpu.c
  src/cpu/convert_cpu.c
  src/cpu/transpose_inplace_cpu.c)
target_compile_definitions(duet PRIVATE DUET_BACKEND_CPU=1)
if(DUET_OPENMP)
  find_package(OpenMP COMPONENTS C)
  if(OpenMP_C_FOUND)
    target_link_libraries(duet PRIVATE OpenMP::OpenMP_C)
    target_compile_definitions(duet PRIVATE DUET_HAVE_OPENMP=1)
  endif()
endif()

# f32 and f64 AUTO gemm on OpenBLAS, BLIS or MKL when one is found (DUET_CBLAS, docs/cpu.md).
include(DuetCblas)

# The host kernels stand in for GPU kernels and are only useful fast: compile them optimised
# in every configuration but Debug, including the default empty one, which has no -O at all.
if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  set_source_files_properties(src/cpu/gemm_cpu.c src/cpu/gemm_lowp_cpu.c src/cpu/copy_cpu.c
    src/cpu/gemm_epilogue_cpu.c
    src/cpu/transpose_inplace_cpu.c
    PROPERTIES COMPILE_OPTIONS "$<$<NOT:$<CONFIG:Debug>>:-O3>")
endif()
