# Cross-compiling Stipple for arm64 Linux on an x86-64 Debian host
# (deploy/cross-build-arm64.sh): Debian's aarch64-linux-gnu GCC, and every library from an
# arm64 Debian sysroot that the script unpacks. Programs run at build time (protoc, the
# gRPC plugin) are the host's.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
if(NOT STIPPLE_ARM64_SYSROOT)
  set(STIPPLE_ARM64_SYSROOT /opt/stipple-arm64/sysroot)
endif()
set(CMAKE_SYSROOT ${STIPPLE_ARM64_SYSROOT})
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config reads the sysroot's .pc files and prefixes their paths with it.
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${STIPPLE_ARM64_SYSROOT})
set(ENV{PKG_CONFIG_LIBDIR}
    ${STIPPLE_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${STIPPLE_ARM64_SYSROOT}/usr/share/pkgconfig)
# The sysroot's gRPC package names its own (arm64) plugin; protoc runs the host's.
set(STIPPLE_GRPC_CPP_PLUGIN /usr/bin/grpc_cpp_plugin CACHE FILEPATH "gRPC's protoc plugin (host)")
# Programs built here run under qemu-user where CMake or CTest needs to run one.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L ${STIPPLE_ARM64_SYSROOT})
