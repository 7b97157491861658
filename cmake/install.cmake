# `cmake --install build [--prefix DIR]`: the command line, its evaluator child, the
# embedding library and the runtime library that ahead-of-time compiled pipelines link,
# with a CMake package so that a user's project loads pipelines at run time or builds
# them as part of its own build (issue #30):
#
#   find_package(Stipple REQUIRED)                       # -DCMAKE_PREFIX_PATH=DIR
#   target_link_libraries(app PRIVATE Stipple::stipple)  # <stipple/stipple.h>
#   stipple_add_pipeline(blur FROM blur.stp SCHEDULE blur.sched)
#   target_link_libraries(app PRIVATE blur)              # app includes "blur.h"
#
# Layout: bin/stipple, bin/stipple-evaluator (found beside stipple), lib/libstipple.so,
# include/stipple/, lib/libstipple_runtime.a, lib/cmake/Stipple/, share/stipple/fixtures/
# (the bundled photos). The runtime is installed as a file and imported by the package
# rather than exported as a target: generated code needs only its C entry points, not
# the compiler libraries its CMake target links for the JIT's buffers.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# As built: their run path names Debian's LLVM 14 (/usr/lib/llvm-14/lib), which is where
# an installed Stipple finds it too (install(TARGETS) would try to rewrite it and fail on
# the linker's form of it).
install(PROGRAMS $<TARGET_FILE:stipple> $<TARGET_FILE:stipple-evaluator>
        DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES $<TARGET_FILE:stipple_runtime> DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The photos a tune uses when given none (client/photo_args.cpp finds them here).
install(FILES datasets/fixtures/natural-820x614.png datasets/fixtures/people-256x192.png
        DESTINATION ${CMAKE_INSTALL_DATADIR}/stipple/fixtures)

set(STIPPLE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Stipple)
# The embedding library and its headers, exported as Stipple::stipple. Its run path needs
# nothing: Debian's LLVM 14 is in the loader's own path as well (libllvm14).
# (The sanitiser tree has no embedding library: client/CMakeLists.txt.)
if(TARGET stipple_embedding)
  install(TARGETS stipple_embedding EXPORT StippleTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY client/library/include/stipple DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT StippleTargets NAMESPACE Stipple:: DESTINATION ${STIPPLE_CMAKE_DIR})
  # The Python module, where the interpreter looks for a prefix of /usr/local
  # (PYTHONPATH=PREFIX/lib/python3.X/dist-packages for another).
  install(TARGETS stipple_python LIBRARY DESTINATION ${STIPPLE_PYTHON_DIR})
endif()
configure_package_config_file(cmake/StippleConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/StippleConfig.cmake
  INSTALL_DESTINATION ${STIPPLE_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/StippleConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/StippleConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/StippleConfigVersion.cmake
        DESTINATION ${STIPPLE_CMAKE_DIR})
