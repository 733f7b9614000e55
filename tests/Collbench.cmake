# Helpers shared by the test folders.
if(NOT Python3_EXECUTABLE)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()

# Environment for every mpirun in tests: root is allowed, more ranks than cores are fine,
# and oversubscribed ranks yield instead of spinning.
set(COLLBENCH_MPI_TEST_ENV
  "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_mpi_yield_when_idle=1;OMPI_MCA_btl_vader_single_copy_mechanism=cma")

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
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} --oversubscribe $<TARGET_FILE:test_${name}>)
    set_tests_properties(mpi.${name}.np${np} PROPERTIES TIMEOUT 300 LABELS mpi ENVIRONMENT "${COLLBENCH_MPI_TEST_ENV}"
                         PROCESSORS 2 SKIP_RETURN_CODE 77)
  endforeach()
endfunction()

# What each ctest costs (tests/costs.cmake: seconds in a fresh-clone CI run, written by
# scripts/test-costs.sh, and cores): COST, so a fresh run starts the longest tests first and the
# short ones fill in around them; TIMEOUT at 3x, at least 60 s (a hang guard, not a speed check:
# a test whose bound is the feature asserts it itself); PROCESSORS from the cores column. A test
# without a row keeps what it declares. Every tests/ folder calls collbench_test_costs() last
# (CMake 3.25 sets test properties only in the folder that added the test).
include(${CMAKE_CURRENT_LIST_DIR}/costs.cmake)
function(collbench_test_costs)
  list(LENGTH COLLBENCH_TEST_SECONDS n)
  math(EXPR last "${n} - 1")
  foreach(i RANGE 0 ${last} 3)
    math(EXPR j "${i} + 1")
    math(EXPR k "${i} + 2")
    list(GET COLLBENCH_TEST_SECONDS ${i} test)
    list(GET COLLBENCH_TEST_SECONDS ${j} seconds)
    list(GET COLLBENCH_TEST_SECONDS ${k} cores)
    if(TEST ${test})
      math(EXPR timeout "${seconds} * 3")
      if(timeout LESS 60)
        set(timeout 60)
      endif()
      set_tests_properties(${test} PROPERTIES COST ${seconds} TIMEOUT ${timeout})
      if(NOT cores STREQUAL "-")
        set_tests_properties(${test} PROPERTIES PROCESSORS ${cores})
      endif()
    endif()
  endforeach()
endfunction()
