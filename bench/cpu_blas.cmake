# bench/cpu_blas.cmake - cpu-blas-bench: duet_gemm on the cpu backend against the CBLAS it found.
# Built only where duet's cpu backend has a CBLAS (cmake/DuetCblas.cmake, docs/cpu.md).
if(DUET_BACKEND STREQUAL "cpu" AND DUET_HAVE_CBLAS)
  add_executable(cpu-blas-bench ${CMAKE_CURRENT_LIST_DIR}/cpu_blas_bench.c)
  target_link_libraries(cpu-blas-bench PRIVATE duet::duet ${DUET_CBLAS_LINK})
  target_include_directories(cpu-blas-bench PRIVATE ${DUET_CBLAS_INCLUDE})
  target_compile_definitions(cpu-blas-bench PRIVATE ${DUET_CBLAS_DEFINITIONS})
  # duet's thread count is its OpenMP team size: the benchmark sets it with omp_set_num_threads.
  if(TARGET OpenMP::OpenMP_C)
    target_link_libraries(cpu-blas-bench PRIVATE OpenMP::OpenMP_C)
    target_compile_definitions(cpu-blas-bench PRIVATE DUET_BENCH_OPENMP=1)
  endif()
  duet_target_warnings(cpu-blas-bench)
endif()
