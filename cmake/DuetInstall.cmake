# DuetInstall.cmake - install rules: library, header, duet::duet CMake package and duet.pc.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(DUET_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/duet"
    CACHE STRING "Where duetConfig.cmake is installed (relative to the prefix)")
mark_as_advanced(DUET_INSTALL_CMAKEDIR)

install(TARGETS duet EXPORT duetTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(DUET_HAVE_DIST)
  install(TARGETS duet_dist EXPORT duetTargets
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
# duet_dlpack.h and duet_dist.h only where their functions were built.
set(_duet_header_excludes "")
if(NOT DUET_HAVE_DLPACK)
  list(APPEND _duet_header_excludes PATTERN "duet_dlpack.h" EXCLUDE)
endif()
if(NOT DUET_HAVE_DIST)
  list(APPEND _duet_header_excludes PATTERN "duet_dist.h" EXCLUDE)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/duet
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" ${_duet_header_excludes})
install(EXPORT duetTargets
  FILE duetTargets.cmake
  NAMESPACE duet::
  DESTINATION ${DUET_INSTALL_CMAKEDIR})

write_basic_package_version_file(${PROJECT_BINARY_DIR}/duetConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  # The SONAME's policy (CMakeLists.txt): 0.x matches the same minor version only.
  COMPATIBILITY ${DUET_VERSION_COMPATIBILITY})

install(FILES
  ${PROJECT_BINARY_DIR}/duetConfig.cmake
  ${PROJECT_BINARY_DIR}/duetConfigVersion.cmake
  DESTINATION ${DUET_INSTALL_CMAKEDIR})
install(FILES ${PROJECT_BINARY_DIR}/duet.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Turns one entry of a link interface into linker flags for duet.pc (appended to out_var).
# Imported targets are followed through their locations and interface link libraries, so the
# backend's runtimes (CUDA::cudart, hip::host, OpenMP::OpenMP_C, ...) come out as -L/-l flags.
function(_duet_pc_flags item out_var depth)
  set(flags "${${out_var}}")
  if(depth GREATER 8 OR item STREQUAL "")
    return()
  endif()
  if(item MATCHES "^\\$<LINK_ONLY:(.*)>$")
    set(item "${CMAKE_MATCH_1}")
  endif()
  if(item MATCHES "^\\$<")
    return() # other generator expressions have no pkg-config equivalent
  endif()
  if(TARGET ${item})
    get_target_property(imported ${item} IMPORTED)
    get_target_property(type ${item} TYPE)
    if(NOT imported)
      # One of duet's own static or object libraries: it is inside libduet or installed with it.
      if(type STREQUAL "STATIC_LIBRARY")
        get_target_property(name ${item} OUTPUT_NAME)
        if(NOT name)
          set(name ${item})
        endif()
        list(APPEND flags "-l${name}")
      endif()
      get_target_property(deps ${item} LINK_LIBRARIES)
    else()
      set(loc "")
      if(NOT type STREQUAL "INTERFACE_LIBRARY")
        foreach(prop IMPORTED_LOCATION_RELEASE IMPORTED_LOCATION_RELWITHDEBINFO
                     IMPORTED_LOCATION_NOCONFIG IMPORTED_LOCATION IMPORTED_LOCATION_DEBUG)
          get_target_property(l ${item} ${prop})
          if(l AND NOT loc)
            set(loc "${l}")
          endif()
        endforeach()
      endif()
      if(loc)
        list(APPEND flags "${loc}")
      endif()
      get_target_property(opts ${item} INTERFACE_LINK_OPTIONS)
      if(opts)
        list(APPEND flags ${opts})
      endif()
      get_target_property(deps ${item} INTERFACE_LINK_LIBRARIES)
    endif()
    if(deps)
      foreach(dep IN LISTS deps)
        _duet_pc_flags("${dep}" flags ${depth}+1)
      endforeach()
    endif()
  elseif(item MATCHES "^-")
    list(APPEND flags "${item}")
  elseif(IS_ABSOLUTE "${item}")
    get_filename_component(dir "${item}" DIRECTORY)
    get_filename_component(name "${item}" NAME)
    if(name MATCHES "^lib(.+)\\.(so|a|dylib)(\\..*)?$")
      set(lib "${CMAKE_MATCH_1}")
      # The compiler searches its implicit directories itself; name only the others.
      if(NOT dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
        list(APPEND flags "-L${dir}")
      endif()
      list(APPEND flags "-l${lib}")
    else()
      list(APPEND flags "${item}")
    endif()
  else()
    list(APPEND flags "-l${item}")
  endif()
  set(${out_var} "${flags}" PARENT_SCOPE)
endfunction()

# Runs once the whole project is configured, so it sees every library the backend linked.
function(_duet_write_package_files)
  get_target_property(libs duet LINK_LIBRARIES)
  if(NOT libs)
    set(libs "")
  endif()
  get_target_property(duet_type duet TYPE)

  # find_dependency() lines: needed when duet is static, where its private dependencies become
  # part of the installed link interface.
  set(deps "")
  set(static_internal "")
  foreach(item IN LISTS libs)
    if(item MATCHES "^\\$<LINK_ONLY:(.*)>$")
      set(item "${CMAKE_MATCH_1}")
    endif()
    if(item MATCHES "^Threads::")
      list(APPEND deps "Threads")
    elseif(item MATCHES "^OpenMP::")
      list(APPEND deps "OpenMP COMPONENTS C")
    elseif(item MATCHES "^CUDA::")
      list(APPEND deps "CUDAToolkit")
    elseif(item MATCHES "^hip::")
      list(APPEND deps "hip")
    elseif(item MATCHES "^hip-lang::")
      list(APPEND deps "hip-lang")
    elseif(TARGET ${item})
      get_target_property(imported ${item} IMPORTED)
      get_target_property(type ${item} TYPE)
      if(NOT imported AND type MATCHES "^(STATIC|OBJECT)_LIBRARY$")
        list(APPEND static_internal ${item})
      endif()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES deps)
  set(DUET_FIND_DEPENDENCIES "")
  if(duet_type STREQUAL "STATIC_LIBRARY")
    foreach(d IN LISTS deps)
      if(d MATCHES "^hip")
        # ROCm's usual prefix, for installs that are not on the default search path.
        string(APPEND DUET_FIND_DEPENDENCIES "  find_dependency(${d} CONFIG HINTS /opt/rocm)\n")
      else()
        string(APPEND DUET_FIND_DEPENDENCIES "  find_dependency(${d})\n")
      endif()
    endforeach()
    # A static libduet links its own helper libraries by name: install and export them too.
    if(static_internal)
      list(REMOVE_DUPLICATES static_internal)
      install(TARGETS ${static_internal} EXPORT duetTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
    endif()
  endif()
  # C++, CUDA or HIP sources inside a static libduet need the C++ runtime in a C program's link
  # (CMake's C linker does not add it; the CUDA language's implicit libraries are not added to
  # a consumer that has not enabled CUDA).
  set(DUET_PACKAGE_CXX_RUNTIME OFF)
  get_target_property(sources duet SOURCES)
  foreach(src IN LISTS sources)
    if(src MATCHES "\\.(cc|cpp|cxx|cu|hip)$" AND NOT MSVC)
      set(DUET_PACKAGE_CXX_RUNTIME ON)
      break()
    endif()
  endforeach()
  set(DUET_PACKAGE_BACKEND ${DUET_BACKEND})
  set(DUET_PACKAGE_DIST ${DUET_HAVE_DIST})
  # Why an installation has no duet::dist, for duetConfig.cmake's message.
  if(DUET_DIST STREQUAL "OFF")
    set(DUET_PACKAGE_DIST_WHY "duet was built with -DDUET_DIST=OFF")
  else()
    set(DUET_PACKAGE_DIST_WHY "duet was built without MPI")
  endif()
  if(duet_type STREQUAL "STATIC_LIBRARY")
    set(DUET_PACKAGE_SHARED OFF)
  else()
    set(DUET_PACKAGE_SHARED ON)
  endif()
  configure_package_config_file(
    ${PROJECT_SOURCE_DIR}/cmake/duetConfig.cmake.in
    ${PROJECT_BINARY_DIR}/duetConfig.cmake
    INSTALL_DESTINATION ${DUET_INSTALL_CMAKEDIR})

  # duet.pc: the private libraries let `pkg-config --static` link a static libduet.
  set(private "")
  foreach(item IN LISTS libs)
    _duet_pc_flags("${item}" private 0)
  endforeach()
  if(DUET_PACKAGE_CXX_RUNTIME)
    list(APPEND private "-lstdc++")
  endif()
  list(REMOVE_DUPLICATES private)
  list(JOIN private " " DUET_PC_LIBS_PRIVATE)
  set(DUET_PC_CFLAGS "")
  if(DUET_PACKAGE_SHARED)
    set(DUET_PC_CFLAGS " -DDUET_SHARED")
  endif()
  # The prefix is found from the .pc file's own place, so `cmake --install --prefix DIR` and
  # moved installs keep working.
  if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(DUET_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
    set(DUET_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
  else()
    file(RELATIVE_PATH up "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
    string(REGEX REPLACE "/$" "" up "${up}")
    set(DUET_PC_PREFIX "\${pcfiledir}/${up}")
    set(DUET_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  endif()
  if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(DUET_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
  else()
    set(DUET_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/duet.pc.in ${PROJECT_BINARY_DIR}/duet.pc @ONLY)
endfunction()

cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL _duet_write_package_files)
