# DuetCblas.cmake - an optional CBLAS (OpenBLAS, BLIS or MKL) under the cpu backend's f32/f64 gemm.
#
# DUET_CBLAS=AUTO (default) uses the first of OpenBLAS, BLIS and MKL (mkl_rt) that is found and
# links; ON fails the configure step when none is; OFF never looks. The reference BLAS (netlib
# libblas, which Debian installs with many packages) is never taken: it is slower than duet's
# own kernel. DUET_CBLAS_LIBRARY and DUET_CBLAS_INCLUDE_DIR (cache variables) name another
# CBLAS by hand; its header must be cblas.h.
#
# Sets DUET_HAVE_CBLAS (ON/OFF) and DUET_CBLAS_NAME ("openblas", "blis", "mkl", "cblas" or the
# reason there is none) for the configure summary, and, when found, compiles
# src/cpu/gemm_blas.c into duet with DUET_HAVE_CBLAS=1, DUET_CBLAS_VENDOR="<name>" and one
# DUET_CBLAS_HAVE_<SETTER>=1 for the thread-count setter the library exports.
set(DUET_CBLAS AUTO CACHE STRING "cpu backend gemm on a CBLAS: AUTO (when found), ON (required) or OFF")
set_property(CACHE DUET_CBLAS PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${DUET_CBLAS}" _duet_cblas_mode)
if(NOT _duet_cblas_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "DUET_CBLAS is \"${DUET_CBLAS}\"; it takes AUTO, ON or OFF")
endif()

set(DUET_HAVE_CBLAS OFF)
set(DUET_CBLAS_NAME "off (DUET_CBLAS=OFF)")

include(CheckCSourceCompiles)
include(CheckSymbolExists)

# Whether a program calling cblas_sgemm and cblas_dgemm through <header> compiles and links
# against lib with include dir inc; the result in out_var (cached under that name).
function(_duet_cblas_links out_var header inc lib)
  set(CMAKE_REQUIRED_INCLUDES "${inc}")
  set(CMAKE_REQUIRED_LIBRARIES "${lib}")
  if(NOT WIN32)
    list(APPEND CMAKE_REQUIRED_LIBRARIES m)
  endif()
  set(CMAKE_REQUIRED_QUIET ON)
  check_c_source_compiles("
#include <${header}>
int main(void)
{
    float a = 1, b = 1, c = 0;
    double x = 1, y = 1, z = 0;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, 1, 1, 1, 1.0, &x, 1, &y, 1, 0.0, &z, 1);
    return (int)(c + z) - 2;
}" ${out_var})
  set(${out_var} ${${out_var}} PARENT_SCOPE)
endfunction()

if(NOT _duet_cblas_mode STREQUAL "OFF")
  set(DUET_CBLAS_NAME "none found")
  find_package(PkgConfig QUIET)
  set(_duet_cblas_found OFF)
  set(_duet_cblas_header cblas.h)

  if(DUET_CBLAS_LIBRARY AND DUET_CBLAS_INCLUDE_DIR)
    # Named by hand: its vendor is read from the symbols it exports below.
    set(_duet_cblas_vendor cblas)
    set(_duet_cblas_lib ${DUET_CBLAS_LIBRARY})
    set(_duet_cblas_inc ${DUET_CBLAS_INCLUDE_DIR})
    _duet_cblas_links(DUET_CBLAS_LINKS_USER cblas.h "${_duet_cblas_inc}" "${_duet_cblas_lib}")
    set(_duet_cblas_found ${DUET_CBLAS_LINKS_USER})
  endif()

  # OpenBLAS: Debian keeps its cblas.h in a directory of its own (openblas-pthread or
  # openblas-openmp, whichever variant is installed), beside the reference BLAS's cblas.h in
  # the multiarch include directory; pkg-config names the one that matches the library.
  if(NOT _duet_cblas_found)
    if(PKG_CONFIG_FOUND)
      pkg_check_modules(DUET_PC_OPENBLAS QUIET openblas)
    endif()
    find_library(DUET_OPENBLAS_LIBRARY NAMES openblas
                 HINTS ${DUET_PC_OPENBLAS_LIBRARY_DIRS} PATH_SUFFIXES openblas-pthread openblas-openmp)
    find_path(DUET_OPENBLAS_INCLUDE_DIR NAMES cblas.h
              HINTS ${DUET_PC_OPENBLAS_INCLUDE_DIRS}
              PATH_SUFFIXES openblas-pthread openblas-openmp openblas NO_DEFAULT_PATH
              PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE} /usr/include /usr/local/include
                    /opt/OpenBLAS/include)
    if(DUET_OPENBLAS_LIBRARY AND DUET_OPENBLAS_INCLUDE_DIR)
      _duet_cblas_links(DUET_CBLAS_LINKS_OPENBLAS cblas.h "${DUET_OPENBLAS_INCLUDE_DIR}"
                        "${DUET_OPENBLAS_LIBRARY}")
      if(DUET_CBLAS_LINKS_OPENBLAS)
        set(_duet_cblas_found ON)
        set(_duet_cblas_vendor openblas)
        set(_duet_cblas_lib ${DUET_OPENBLAS_LIBRARY})
        set(_duet_cblas_inc ${DUET_OPENBLAS_INCLUDE_DIR})
      endif()
    endif()
  endif()

  # BLIS with its CBLAS layer (Debian: libblis-dev; the header in a blis directory).
  if(NOT _duet_cblas_found)
    find_library(DUET_BLIS_LIBRARY NAMES blis blis-mt)
    find_path(DUET_BLIS_INCLUDE_DIR NAMES cblas.h
              PATH_SUFFIXES blis blis-pthread blis-openmp NO_DEFAULT_PATH
              PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE} /usr/include /usr/local/include)
    if(DUET_BLIS_LIBRARY AND DUET_BLIS_INCLUDE_DIR)
      _duet_cblas_links(DUET_CBLAS_LINKS_BLIS cblas.h "${DUET_BLIS_INCLUDE_DIR}" "${DUET_BLIS_LIBRARY}")
      if(DUET_CBLAS_LINKS_BLIS)
        set(_duet_cblas_found ON)
        set(_duet_cblas_vendor blis)
        set(_duet_cblas_lib ${DUET_BLIS_LIBRARY})
        set(_duet_cblas_inc ${DUET_BLIS_INCLUDE_DIR})
      endif()
    endif()
  endif()

  # MKL through its single dynamic library (mkl_rt); MKLROOT as oneAPI's setvars.sh sets it.
  if(NOT _duet_cblas_found)
    find_library(DUET_MKL_LIBRARY NAMES mkl_rt HINTS $ENV{MKLROOT}/lib $ENV{MKLROOT}/lib/intel64)
    find_path(DUET_MKL_INCLUDE_DIR NAMES mkl_cblas.h HINTS $ENV{MKLROOT}/include PATH_SUFFIXES mkl)
    if(DUET_MKL_LIBRARY AND DUET_MKL_INCLUDE_DIR)
      _duet_cblas_links(DUET_CBLAS_LINKS_MKL mkl_cblas.h "${DUET_MKL_INCLUDE_DIR}" "${DUET_MKL_LIBRARY}")
      if(DUET_CBLAS_LINKS_MKL)
        set(_duet_cblas_found ON)
        set(_duet_cblas_vendor mkl)
        set(_duet_cblas_header mkl_cblas.h)
        set(_duet_cblas_lib ${DUET_MKL_LIBRARY})
        set(_duet_cblas_inc ${DUET_MKL_INCLUDE_DIR})
      endif()
    endif()
  endif()

  if(_duet_cblas_found)
    set(DUET_HAVE_CBLAS ON)
    # The thread-count setter each library exports (docs/cpu.md: threads); a CBLAS with none
    # runs on the threads it chose itself.
    set(CMAKE_REQUIRED_INCLUDES "${_duet_cblas_inc}")
    set(CMAKE_REQUIRED_LIBRARIES "${_duet_cblas_lib}")
    set(CMAKE_REQUIRED_QUIET ON)
    set(_duet_cblas_defs DUET_HAVE_CBLAS=1)
    if(_duet_cblas_header STREQUAL "mkl_cblas.h")
      list(APPEND _duet_cblas_defs DUET_CBLAS_HEADER_MKL=1)
    endif()
    check_symbol_exists(openblas_set_num_threads ${_duet_cblas_header} DUET_CBLAS_HAVE_OPENBLAS_THREADS)
    set(_duet_cblas_threads "no thread-count setter")
    if(DUET_CBLAS_HAVE_OPENBLAS_THREADS)
      check_symbol_exists(openblas_get_num_threads ${_duet_cblas_header} DUET_CBLAS_HAVE_OPENBLAS_GET)
      if(DUET_CBLAS_HAVE_OPENBLAS_GET)
        list(APPEND _duet_cblas_defs DUET_CBLAS_OPENBLAS_THREADS=1)
        # The kernel set OpenBLAS picked for this CPU (src/cpu/gemm_blas.c: which is faster).
        check_symbol_exists(openblas_get_corename ${_duet_cblas_header} DUET_CBLAS_HAVE_OPENBLAS_CORENAME)
        if(DUET_CBLAS_HAVE_OPENBLAS_CORENAME)
          list(APPEND _duet_cblas_defs DUET_CBLAS_OPENBLAS_CORENAME=1)
        endif()
        set(_duet_cblas_threads openblas_set_num_threads)
        if(_duet_cblas_vendor STREQUAL "cblas")
          set(_duet_cblas_vendor openblas)
        endif()
      endif()
    else()
      check_symbol_exists(bli_thread_set_num_threads blis.h DUET_CBLAS_HAVE_BLIS_THREADS)
      check_symbol_exists(mkl_set_num_threads_local mkl_service.h DUET_CBLAS_HAVE_MKL_THREADS)
      if(DUET_CBLAS_HAVE_BLIS_THREADS)
        list(APPEND _duet_cblas_defs DUET_CBLAS_BLIS_THREADS=1)
        set(_duet_cblas_threads bli_thread_set_num_threads)
        if(_duet_cblas_vendor STREQUAL "cblas")
          set(_duet_cblas_vendor blis)
        endif()
      elseif(DUET_CBLAS_HAVE_MKL_THREADS)
        list(APPEND _duet_cblas_defs DUET_CBLAS_MKL_THREADS=1)
        set(_duet_cblas_threads mkl_set_num_threads_local)
        if(_duet_cblas_vendor STREQUAL "cblas")
          set(_duet_cblas_vendor mkl)
        endif()
      endif()
    endif()
    unset(CMAKE_REQUIRED_INCLUDES)
    unset(CMAKE_REQUIRED_LIBRARIES)
    unset(CMAKE_REQUIRED_QUIET)
    list(APPEND _duet_cblas_defs "DUET_CBLAS_VENDOR=\"${_duet_cblas_vendor}\"")
    target_sources(duet PRIVATE src/cpu/gemm_blas.c)
    target_include_directories(duet PRIVATE ${_duet_cblas_inc})
    target_link_libraries(duet PRIVATE ${_duet_cblas_lib})
    target_compile_definitions(duet PRIVATE ${_duet_cblas_defs})
    set(DUET_CBLAS_NAME "${_duet_cblas_vendor} (${_duet_cblas_lib}; threads: ${_duet_cblas_threads})")
    set(DUET_CBLAS_INCLUDE ${_duet_cblas_inc})
    set(DUET_CBLAS_LINK ${_duet_cblas_lib})
    set(DUET_CBLAS_DEFINITIONS ${_duet_cblas_defs})
  elseif(_duet_cblas_mode STREQUAL "ON")
    message(FATAL_ERROR "DUET_CBLAS=ON but no CBLAS was found that links (looked for OpenBLAS, "
                        "BLIS and MKL's mkl_rt; Debian: apt-get install libopenblas-dev). Name one "
                        "with -DDUET_CBLAS_LIBRARY=... -DDUET_CBLAS_INCLUDE_DIR=..., or configure "
                        "with -DDUET_CBLAS=AUTO or OFF.")
  endif()
endif()
