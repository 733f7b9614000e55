# `cmake --install BUILD --prefix P` (and the .deb, cmake/Packaging.cmake):
#   P/bin/collbench                      the program; collplot, collcompare, colltune, collmodel (links)
#   P/lib/collbench/                     its two private shared libraries (RUNPATH $ORIGIN-relative)
#                                        and libcollbench-pmpi.so, the MPI preload library (docs/preload.md)
#   P/share/collbench/                   the checkout's layout, so the scripts run unchanged:
#     slurm/  sweep.sh analyze.sh profile.sh local-sweep.sh, lib/, sweeps/, cluster/, testbed/
#     scripts/lib.sh + installed.sh      the shell library; installed.sh says where bin/ is
#     analysis/                          collplot & co., the collbench_analysis package, pyproject.toml
#     results/                           README.md (the results format) and schema/
#     docs/                              the documentation the READMEs link to
#     modulefiles/collbench/VERSION      an Lmod/environment-modules file for sites
# Everything is placed relative to P, so the tree can be moved (or packaged) as a whole.
include(GNUInstallDirs)

set(COLLBENCH_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/collbench)
set(COLLBENCH_INSTALL_LIBDIR ${CMAKE_INSTALL_LIBDIR}/collbench)

# from_to(VAR FROM TO): TO relative to FROM when both are relative install dirs (relocatable),
# else TO's absolute path.
function(_collbench_rel var from to)
  if(IS_ABSOLUTE "${from}" OR IS_ABSOLUTE "${to}")
    if(IS_ABSOLUTE "${to}")
      set(${var} "${to}" PARENT_SCOPE)
    else()
      set(${var} "${CMAKE_INSTALL_PREFIX}/${to}" PARENT_SCOPE)
    endif()
  else()
    file(RELATIVE_PATH _rel "/p/${from}" "/p/${to}")
    set(${var} "${_rel}" PARENT_SCOPE)
  endif()
endfunction()

# The program and its libraries. The build tree keeps its own RPATH; the installed files get
# an $ORIGIN-relative RUNPATH to the private library folder and nothing else (no build or
# toolkit paths: the .deb must not reach into /usr/local/cuda).
_collbench_rel(_bin_to_lib ${CMAKE_INSTALL_BINDIR} ${COLLBENCH_INSTALL_LIBDIR})
if(NOT IS_ABSOLUTE "${_bin_to_lib}")
  set(_bin_to_lib "$ORIGIN/${_bin_to_lib}")
endif()
set_target_properties(collbench PROPERTIES INSTALL_RPATH "${_bin_to_lib}")
set_target_properties(collbench_gpu collbench_backends collbench_pmpi PROPERTIES INSTALL_RPATH "$ORIGIN")
if(COLLBENCH_HAVE_CUDA OR COLLBENCH_HAVE_NCCL)
  # an installed CUDA build finds libcudart/libnccl where it was linked against them (/usr/local/cuda)
  set_target_properties(collbench_gpu PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
endif()
install(TARGETS collbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS collbench_collectives collbench_gpu collbench_backends collbench_pmpi LIBRARY DESTINATION ${COLLBENCH_INSTALL_LIBDIR})

# The shell library and the Slurm scripts, in the checkout's layout (sweep.sh finds its tree
# by scripts/lib.sh + slurm/lib/steps.sh, as in a checkout).
install(PROGRAMS scripts/lib.sh DESTINATION ${COLLBENCH_INSTALL_DATADIR}/scripts)
_collbench_rel(_data_to_bin ${COLLBENCH_INSTALL_DATADIR} ${CMAKE_INSTALL_BINDIR})
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/install/installed.sh CONTENT
"# shellcheck shell=bash disable=SC2034
# Written by CMake (cmake/Install.cmake): this tree is an installed collbench. Its programs
# (collbench, collplot ...) are in this folder, relative to the tree (share/collbench) unless absolute.
COLLBENCH_INSTALLED_BINDIR=@_data_to_bin@
" @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/install/installed.sh DESTINATION ${COLLBENCH_INSTALL_DATADIR}/scripts)
install(PROGRAMS slurm/sweep.sh slurm/analyze.sh slurm/profile.sh slurm/local-sweep.sh
        DESTINATION ${COLLBENCH_INSTALL_DATADIR}/slurm)
install(FILES slurm/README.md DESTINATION ${COLLBENCH_INSTALL_DATADIR}/slurm)
install(DIRECTORY slurm/lib slurm/sweeps DESTINATION ${COLLBENCH_INSTALL_DATADIR}/slurm)
install(DIRECTORY slurm/cluster slurm/testbed DESTINATION ${COLLBENCH_INSTALL_DATADIR}/slurm
        FILES_MATCHING PATTERN "*.sh" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
                                                  GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE
                       PATTERN "*.md")

# Analysis: the command scripts find their package beside them (realpath), so bin/ gets links.
# The package's copy of the JSON Schema is a link into results/schema/ in the checkout; the
# installed package gets the file itself.
install(PROGRAMS analysis/collplot analysis/collcompare analysis/colltune analysis/collmodel
        DESTINATION ${COLLBENCH_INSTALL_DATADIR}/analysis)
install(FILES analysis/README.md analysis/pyproject.toml DESTINATION ${COLLBENCH_INSTALL_DATADIR}/analysis)
install(DIRECTORY analysis/collbench_analysis DESTINATION ${COLLBENCH_INSTALL_DATADIR}/analysis
        FILES_MATCHING PATTERN "*.py"
        PATTERN "__pycache__" EXCLUDE)
install(FILES results/schema/collbench-1.json analysis/collbench_analysis/registry-snapshot.json
        DESTINATION ${COLLBENCH_INSTALL_DATADIR}/analysis/collbench_analysis)
install(FILES results/README.md DESTINATION ${COLLBENCH_INSTALL_DATADIR}/results)
install(DIRECTORY docs/ DESTINATION ${COLLBENCH_INSTALL_DATADIR}/docs)
install(DIRECTORY results/schema DESTINATION ${COLLBENCH_INSTALL_DATADIR}/results)
_collbench_rel(_bin_to_analysis ${CMAKE_INSTALL_BINDIR} ${COLLBENCH_INSTALL_DATADIR}/analysis)
foreach(_tool collplot collcompare colltune collmodel)
  file(CREATE_LINK ${_bin_to_analysis}/${_tool} ${PROJECT_BINARY_DIR}/install/${_tool} SYMBOLIC)
  install(FILES ${PROJECT_BINARY_DIR}/install/${_tool} DESTINATION ${CMAKE_INSTALL_BINDIR})
endforeach()

# The modulefile (Tcl: read by Lmod and by environment-modules), written at install time with
# the prefix it is installed to (the .deb: /usr); sites copy or link it into their MODULEPATH.
install(CODE "
  set(COLLBENCH_MODULE_TEMPLATE \"${PROJECT_SOURCE_DIR}/cmake/collbench.modulefile.in\")
  set(COLLBENCH_MODULE_OUT \"${PROJECT_BINARY_DIR}/install/modulefile/${PROJECT_VERSION}\")
  set(COLLBENCH_MODULE_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
  set(COLLBENCH_MODULE_DATADIR \"${COLLBENCH_INSTALL_DATADIR}\")
  set(COLLBENCH_MODULE_VERSION \"${PROJECT_VERSION}\")
  include(\"${PROJECT_SOURCE_DIR}/cmake/InstallModulefile.cmake\")
")
