# What `cmake --install build --prefix P` puts where (relocatable: the programs find the rest from their own path,
# base/include/omnilearn/base/install_layout.h), the exported package `find_package(OmniLearn)`, and CPack's
# Debian package (`cpack -G DEB` in the build folder).
#
#   P/bin/omnilearn                                  the command line (and omnilearn-sim-train, with LibTorch)
#   P/libexec/omnilearn/omnilearn-emulate-worker     the testbed worker (when LibTorch was found)
#   P/share/omnilearn/analysis/omnilearn_analysis/   the Python package behind `omnilearn report`
#   P/share/omnilearn/scenarios/, traces/            scenario files; derived traces (data/) with FORMAT.md
#   P/include/omnilearn/..., P/lib/libomnilearn_*.a  the libraries below with their public headers
#   P/lib/cmake/OmniLearn/                           OmniLearnConfig.cmake, targets omnilearn::<name>
#   P/share/doc/omnilearn/                           README, LICENSE, NOTICE, CITATION.cff, CHANGELOG, docs/ (the guide)
include(CMakePackageConfigHelpers)

# The exported libraries: static, Torch-, SimGrid- and libcgroup-free. A new library that installs cleanly joins
# this list (made by omnilearn_add_module, cmake/OmnilearnModule.cmake, as base/CMakeLists.txt is).
set(OMNILEARN_EXPORTED_LIBRARIES base controller traces hybrid scenarios run)
set(OMNILEARN_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/OmniLearn)

foreach(name IN LISTS OMNILEARN_EXPORTED_LIBRARIES)
  set_target_properties(omnilearn_${name} PROPERTIES EXPORT_NAME ${name})
  install(TARGETS omnilearn_${name} EXPORT OmniLearnTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${name}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
install(EXPORT OmniLearnTargets NAMESPACE omnilearn:: DESTINATION ${OMNILEARN_CMAKE_INSTALL_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/OmniLearnConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/OmniLearnConfig.cmake INSTALL_DESTINATION ${OMNILEARN_CMAKE_INSTALL_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/OmniLearnConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/OmniLearnConfig.cmake ${PROJECT_BINARY_DIR}/OmniLearnConfigVersion.cmake
        DESTINATION ${OMNILEARN_CMAKE_INSTALL_DIR})

# Programs.
if(TARGET omnilearn)
  install(TARGETS omnilearn RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
if(TARGET omnilearn-sim-train)  # omnilearn sim hands workload.numerics: real to it, found next to omnilearn
  install(TARGETS omnilearn-sim-train RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
if(TARGET omnilearn-emulate-worker)
  install(TARGETS omnilearn-emulate-worker RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/omnilearn)
endif()

# Data: the analysis package, the scenario files, the derived traces and their format.
set(OMNILEARN_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/omnilearn)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/analysis/omnilearn_analysis DESTINATION ${OMNILEARN_SHARE_DIR}/analysis
        PATTERN __pycache__ EXCLUDE PATTERN "*.pyc" EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios/ DESTINATION ${OMNILEARN_SHARE_DIR}/scenarios
        FILES_MATCHING PATTERN "*.yaml" PATTERN "*.xml" PATTERN "README.md" PATTERN include EXCLUDE PATTERN src EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/traces/data ${PROJECT_SOURCE_DIR}/traces/devices
        DESTINATION ${OMNILEARN_SHARE_DIR}/traces)
install(FILES ${PROJECT_SOURCE_DIR}/traces/FORMAT.md ${PROJECT_SOURCE_DIR}/traces/JOBS.md ${PROJECT_SOURCE_DIR}/traces/README.md
        DESTINATION ${OMNILEARN_SHARE_DIR}/traces)
install(FILES README.md LICENSE NOTICE CITATION.cff CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The user guide beside the README, so that the README's links to docs/ resolve in the installed tree.
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs FILES_MATCHING PATTERN "*.md")

# The Debian package: cpack -G DEB (see docs/install.md, "Debian package"). Installs under /usr; the dependencies come from
# dpkg-shlibdeps, plus python3-pandas and python3-matplotlib for `omnilearn report` (python3-scipy: asp-study).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME omnilearn)
set(CPACK_PACKAGE_VENDOR "OmniLearn contributors")
# The package's Maintainer field: a placeholder (.invalid) until whoever publishes the package sets theirs.
set(OMNILEARN_PACKAGE_CONTACT "OmniLearn maintainers <maintainers@omnilearn.invalid>" CACHE STRING
    "Maintainer of the Debian package (cpack -G DEB)")
set(CPACK_PACKAGE_CONTACT "${OMNILEARN_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Batch-size control for distributed deep learning on heterogeneous clusters")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3, python3-pandas, python3-matplotlib, python3-scipy")
include(CPack)
