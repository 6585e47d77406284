# check_package.cmake - the installed CMake package against the library's version policy.
#
#   cmake -DBUILD_DIR=... -DWORK_DIR=... -DSOURCE_DIR=... -DVERSION=X.Y.Z -DHAVE_DIST=ON|OFF
#         [-DSONAME=libduet.so.X.Y] -P check_package.cmake
#
# Installs BUILD_DIR into WORK_DIR/prefix, then configures tests/package against it and checks:
#   - the shared library's SONAME is libduet.so.MAJOR.MINOR before 1.0 (MAJOR after);
#   - find_package(duet MAJOR.MINOR) succeeds and an older or newer minor version is refused
#     before 1.0 (duetConfigVersion.cmake's SameMinorVersion), as the SONAME says;
#   - COMPONENTS dist succeeds where duet_dist was built, and elsewhere fails with a message
#     naming duet::dist and why; an unknown component fails naming it.
cmake_minimum_required(VERSION 3.21)

set(failures 0)
macro(fail text)
  message(SEND_ERROR "check_package: ${text}")
  math(EXPR failures "${failures} + 1")
endmacro()

string(REPLACE "." ";" parts "${VERSION}")
list(GET parts 0 major)
list(GET parts 1 minor)

if(DEFINED SONAME AND NOT SONAME STREQUAL "")
  if(major EQUAL 0)
    set(want_soname "libduet.so.${major}.${minor}")
  else()
    set(want_soname "libduet.so.${major}")
  endif()
  if(NOT SONAME STREQUAL want_soname)
    fail("the library's SONAME is ${SONAME}, the policy says ${want_soname}")
  endif()
endif()

file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_package: cmake --install ${BUILD_DIR} failed:\n${out}")
endif()

# configure(NAME REQUEST COMPONENT WANT_OK REGEX): WANT_OK 1 must succeed, 0 must fail with
# output matching REGEX.
set(n 0)
function(configure request component want_ok regex)
  math(EXPR idx "${n} + 1")
  set(n ${idx} PARENT_SCOPE)
  set(bin "${WORK_DIR}/case${idx}")
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${bin}"
                          "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" "-DDUET_REQUEST=${request}"
                          "-DDUET_COMPONENT=${component}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(what "find_package(duet ${request} COMPONENTS ${component})")
  string(REGEX REPLACE "[ \n\t\r]+" " " flat "${out} ${err}")
  if(want_ok AND NOT rc EQUAL 0)
    fail("${what} failed:\n${err}")
  elseif(NOT want_ok AND rc EQUAL 0)
    fail("${what} succeeded; it must fail")
  elseif(NOT want_ok AND NOT flat MATCHES "${regex}")
    fail("${what} failed without saying \"${regex}\":\n${err}")
  else()
    message(STATUS "ok: ${what}")
  endif()
endfunction()

configure("${major}.${minor}" "" 1 "")
if(major EQUAL 0)
  if(minor GREATER 0)
    math(EXPR older "${minor} - 1")
    configure("${major}.${older}" "" 0 "compatible with requested version")
  endif()
  math(EXPR newer "${minor} + 1")
  configure("${major}.${newer}" "" 0 "compatible with requested version")
endif()
if(HAVE_DIST)
  configure("${major}.${minor}" dist 1 "")
else()
  configure("${major}.${minor}" dist 0
            "Reason given by package: duet was built (without MPI|with -DDUET_DIST=OFF), so duet::dist was not built")
endif()
configure("${major}.${minor}" bogus 0 "Reason given by package: duet has no component \"bogus\"")

if(failures GREATER 0)
  message(FATAL_ERROR "check_package: ${failures} failure(s)")
endif()
