# DuetPackage.cmake - CPack: a .deb and a .tar.gz of what `cmake --install` installs
# (`cpack -G "DEB;TGZ"` or `cmake --build BUILD --target package` in a build directory).
#
# One package, named duet, per build: the backend is in the file name and the description, so a
# cpu and a cuda package of one version are told apart. The .deb's Depends are computed by
# dpkg-shlibdeps (DUET_DEB_SHLIBDEPS, on where dpkg-shlibdeps is found and the backend is cpu;
# the CUDA and ROCm runtimes often come from their vendors' installers, not from Debian
# packages, so a GPU package depends on libc6 only and leaves the runtime to the user).

install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/README.md
              ${PROJECT_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

find_program(DUET_DPKG_SHLIBDEPS dpkg-shlibdeps)
mark_as_advanced(DUET_DPKG_SHLIBDEPS)
set(_duet_shlibdeps_default OFF)
if(DUET_DPKG_SHLIBDEPS AND DUET_BACKEND STREQUAL "cpu")
  set(_duet_shlibdeps_default ON)
endif()
option(DUET_DEB_SHLIBDEPS "Compute the .deb's Depends with dpkg-shlibdeps"
       ${_duet_shlibdeps_default})

set(CPACK_PACKAGE_NAME duet)
set(CPACK_PACKAGE_VENDOR "the duet authors")
set(CPACK_PACKAGE_CONTACT "the duet authors")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION} (${DUET_BACKEND} backend)")
set(CPACK_PACKAGE_DESCRIPTION
    "duet is a C library for GPU compute with one interface on NVIDIA GPUs (CUDA), AMD GPUs (HIP) and the host (cpu): buffers, streams, events, GEMM, transpose, elementwise ops and runtime-compiled kernels. This package holds the ${DUET_BACKEND} backend's library, its header, the CMake package and duet.pc.")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_RESOURCE_FILE_README ${PROJECT_SOURCE_DIR}/README.md)
set(CPACK_PACKAGE_FILE_NAME
    "duet-${PROJECT_VERSION}-${DUET_BACKEND}-${CMAKE_SYSTEM_NAME}-${CMAKE_SYSTEM_PROCESSOR}")
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build[^/]*/")

set(CPACK_DEBIAN_PACKAGE_MAINTAINER "the duet authors")
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
if(DUET_DEB_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  # libduet_dist and the tools link libduet from this very package.
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR})
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6")
endif()
if(DUET_HAVE_DIST)
  # duet_dist.h includes mpi.h: building against duet::dist needs MPI's development files.
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libopenmpi-dev | mpi-default-dev")
endif()

include(CPack)
