# The NCCL library must be the NCCL whose nccl.h the build compiles against: a header from one
# release and a library from another compile and link, then misbehave at run time (config
# struct layouts, NCCL_VERSION_CODE branches such as ncclAlltoAll). Included by Gpu.cmake;
# also a script for the test (tests/gpu/CMakeLists.txt):
#   cmake -DNCCL_INCLUDE_DIR=DIR -DNCCL_LIBRARY_VERSION=2.28.9 -P cmake/NcclVersion.cmake

# "2.28.9" from DIR/nccl.h's NCCL_MAJOR/MINOR/PATCH; "" when unreadable.
function(collbench_nccl_header_version dir out)
  set(v "")
  if(EXISTS "${dir}/nccl.h")
    file(STRINGS "${dir}/nccl.h" defs REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) +[0-9]+")
    foreach(part MAJOR MINOR PATCH)
      string(REGEX MATCH "NCCL_${part} +([0-9]+)" _ "${defs}")
      list(APPEND v "${CMAKE_MATCH_1}")
    endforeach()
    list(JOIN v "." v)
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

# Fails configure, in one message, when the two versions differ (an unknown one passes).
function(collbench_nccl_check_versions header library where)
  if(header AND library AND NOT header STREQUAL library)
    message(FATAL_ERROR "NCCL version mismatch: nccl.h is ${header} but the library ${where} is ${library}; "
                        "point NCCL_INCLUDE_DIR and NCCL_LIBRARY at one NCCL install, or -DCOLLBENCH_NCCL=OFF")
  endif()
endfunction()

# The library's own version (ncclGetVersion, needs no GPU), by compiling and running a probe.
function(collbench_nccl_library_version include_dir library out)
  set(src "${CMAKE_BINARY_DIR}/CMakeFiles/collbench_nccl_version.c")
  file(WRITE "${src}" "#include <stdio.h>\n#include <nccl.h>\nint main(void) { int v = 0;\n"
                      "  if (ncclGetVersion(&v) != ncclSuccess) return 1;\n"
                      "  printf(\"%d.%d.%d\", v / 10000, v / 100 % 100, v % 100); return 0; }\n")
  try_run(run_rc compile_ok "${CMAKE_BINARY_DIR}/CMakeFiles/collbench_nccl_version" "${src}"
          CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${include_dir}" LINK_LIBRARIES "${library}"
          COMPILE_OUTPUT_VARIABLE compile_log RUN_OUTPUT_VARIABLE run_out)
  if(compile_ok AND run_rc EQUAL 0)
    set(${out} "${run_out}" PARENT_SCOPE)
  else()
    message(STATUS "NCCL: could not run ncclGetVersion against ${library}; library version not checked")
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  collbench_nccl_header_version("${NCCL_INCLUDE_DIR}" header)
  collbench_nccl_check_versions("${header}" "${NCCL_LIBRARY_VERSION}" "(given)")
  message(STATUS "NCCL header ${header} matches library ${NCCL_LIBRARY_VERSION}")
endif()
