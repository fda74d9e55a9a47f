#!/bin/sh
# Installs the Debian/Ubuntu packages the C++ client (clients/cpp) and C++ bots build with.
# CI runs it (as root); on a workstation: sudo clients/cpp/install-deps.sh
#
#   g++, make, cmake          the compiler and the build
#   pkg-config                gRPC's CMake package looks RE2 up through it
#   protobuf-compiler         protoc, which generates the message code from proto/
#   protobuf-compiler-grpc    grpc_cpp_plugin, which generates the service stub
#   libprotobuf-dev           protobuf's headers and library
#   libgrpc++-dev             gRPC C++'s headers, library and CMake package
set -eu
PACKAGES="g++ make cmake pkg-config protobuf-compiler protobuf-compiler-grpc libprotobuf-dev libgrpc++-dev"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=sudo
    else
        echo "error: run as root (or install sudo) to install: $PACKAGES" >&2
        exit 1
    fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "error: no apt-get here; install the equivalents of these Debian packages: $PACKAGES" >&2
    exit 1
fi
# the package lists of a fresh machine are empty or stale until updated
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $PACKAGES
