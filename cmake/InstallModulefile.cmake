# Run by `cmake --install` (cmake/Install.cmake): the modulefile, with the prefix this install
# goes to (CMAKE_INSTALL_PREFIX here is the install-time one: --prefix P, or /usr for the .deb).
foreach(_dir BINDIR DATADIR)
  if(IS_ABSOLUTE "${COLLBENCH_MODULE_${_dir}}")
    set(COLLBENCH_MODULE_FULL_${_dir} "${COLLBENCH_MODULE_${_dir}}")
  else()
    set(COLLBENCH_MODULE_FULL_${_dir} "${CMAKE_INSTALL_PREFIX}/${COLLBENCH_MODULE_${_dir}}")
  endif()
endforeach()
set(COLLBENCH_MODULE_PREFIX "${CMAKE_INSTALL_PREFIX}")
file(READ "${COLLBENCH_MODULE_TEMPLATE}" _template)
file(CONFIGURE OUTPUT "${COLLBENCH_MODULE_OUT}" CONTENT "${_template}" @ONLY)
# file(INSTALL) honours DESTDIR and records the file in install_manifest.txt
file(INSTALL DESTINATION "${COLLBENCH_MODULE_FULL_DATADIR}/modulefiles/collbench" TYPE FILE
     FILES "${COLLBENCH_MODULE_OUT}")
