# Helpers shared by the test folders.
if(NOT Python3_EXECUTABLE)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()

# Environment for every launch in tests, per MPI (COLLBENCH_MPI): root is allowed, more ranks
# than cores are fine, and oversubscribed ranks yield instead of spinning. Open MPI does it all
# through its variables (and mpirun's --oversubscribe: COLLBENCH_MPIEXEC_FLAGS); MPICH's hydra
# needs none of the flags, but ch4's progress never yields: the tests preload
# tests/mpich/yield_when_idle.cpp (hydra hands the environment to every rank).
if(COLLBENCH_MPI STREQUAL "mpich")
  set(COLLBENCH_MPI_TEST_ENV "LD_PRELOAD=$<TARGET_FILE:collbench_yield_when_idle>")
  set(COLLBENCH_MPIEXEC_FLAGS "")
else()
  set(COLLBENCH_MPI_TEST_ENV
    "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_mpi_yield_when_idle=1;OMPI_MCA_btl_vader_single_copy_mechanism=cma")
  set(COLLBENCH_MPIEXEC_FLAGS --oversubscribe)
endif()

# collbench_unit_test(NAME src...): a GoogleTest executable registered as one ctest "unit.NAME".
# Tests link the library only; the harness's own tests add collbench_harness.
function(collbench_unit_test name)
  add_executable(test_${name} ${ARGN})
  target_link_libraries(test_${name} PRIVATE collbench_collectives GTest::gtest_main)
  add_test(NAME unit.${name} COMMAND test_${name})
  set_tests_properties(unit.${name} PROPERTIES TIMEOUT 600 LABELS unit)
endfunction()

# The MPI tests' main(): MPI_Init, failures reported from every rank, worst exit status.
add_library(collbench_mpi_gtest_main STATIC ${CMAKE_CURRENT_LIST_DIR}/common/mpi_main.cpp)
target_link_libraries(collbench_mpi_gtest_main PUBLIC MPI::MPI_CXX GTest::gtest)

# collbench_mpi_test(NAME NP_LIST src...): one MPI GoogleTest executable run under
# mpirun -np N for each N, as ctests "mpi.NAME.npN"; every one has a timeout. A run where some
# test was skipped exits 77 (common/mpi_main.cpp): ctest shows it "Skipped", not "Passed".
function(collbench_mpi_test name np_list)
  add_executable(test_${name} ${ARGN})
  target_link_libraries(test_${name} PRIVATE collbench_collectives collbench_mpi_gtest_main)
  foreach(np ${np_list})
    add_test(NAME mpi.${name}.np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${COLLBENCH_MPIEXEC_FLAGS} $<TARGET_FILE:test_${name}>)
    set_tests_properties(mpi.${name}.np${np} PROPERTIES TIMEOUT 300 LABELS mpi ENVIRONMENT "${COLLBENCH_MPI_TEST_ENV}"
                         PROCESSORS 2 SKIP_RETURN_CODE 77)
  endforeach()
endfunction()

# collbench_mpich_suite(TESTS test... TARGETS target...): in an MPICH tree (COLLBENCH_MPI=mpich),
# the tests MPICH's CI stage runs (label "mpich": scripts/ci-extra.sh mpich, ctest -L mpich) and
# the targets they need (built by the target collbench_mpich_suite, not the whole tree). Each
# folder names its own tests (CMake 3.25 sets test properties only where the test was added).
# Elsewhere it does nothing: under Open MPI the full suites run.
if(COLLBENCH_MPI STREQUAL "mpich")
  add_custom_target(collbench_mpich_suite)
endif()
function(collbench_mpich_suite)
  if(NOT COLLBENCH_MPI STREQUAL "mpich")
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "" "TESTS;TARGETS")
  foreach(test ${arg_TESTS})
    if(NOT TEST ${test})
      message(FATAL_ERROR "collbench_mpich_suite: no test ${test}")
    endif()
    set_property(TEST ${test} APPEND PROPERTY LABELS mpich)
  endforeach()
  add_dependencies(collbench_mpich_suite collbench_yield_when_idle ${arg_TARGETS})
endfunction()

# What each ctest costs (tests/costs.cmake: seconds in a fresh-clone CI run, written by
# scripts/test-costs.sh, and cores): COST, so a fresh run starts the longest tests first and the
# short ones fill in around them; TIMEOUT at 5x, at least 120 s (a hang guard, not a speed check:
# a test whose bound is the feature asserts it itself; the machines of this kind differ by up to
# 3x per test between sessions, tests/README.md); PROCESSORS from the cores column. A test
# without a row keeps what it declares. Every tests/ folder calls collbench_test_costs() last
# (CMake 3.25 sets test properties only in the folder that added the test).
# The table's seconds are Open MPI's: an MPICH tree's tests keep what they declare (its stage's
# seconds are in tests/README.md).
include(${CMAKE_CURRENT_LIST_DIR}/costs.cmake)
function(collbench_test_costs)
  if(COLLBENCH_MPI STREQUAL "mpich")
    return()
  endif()
  list(LENGTH COLLBENCH_TEST_SECONDS n)
  math(EXPR last "${n} - 1")
  foreach(i RANGE 0 ${last} 3)
    math(EXPR j "${i} + 1")
    math(EXPR k "${i} + 2")
    list(GET COLLBENCH_TEST_SECONDS ${i} test)
    list(GET COLLBENCH_TEST_SECONDS ${j} seconds)
    list(GET COLLBENCH_TEST_SECONDS ${k} cores)
    if(TEST ${test})
      math(EXPR timeout "${seconds} * 5")
      if(timeout LESS 120)
        set(timeout 120)
      endif()
      set_tests_properties(${test} PROPERTIES COST ${seconds} TIMEOUT ${timeout})
      if(NOT cores STREQUAL "-")
        set_tests_properties(${test} PROPERTIES PROCESSORS ${cores})
      endif()
    endif()
  endforeach()
endfunction()
