#!/bin/sh
# Builds the bot into build/cpp-counter: what bot.toml's `setup` runs, in this folder.
# A missing toolchain stops here (or in CMake) with the Debian packages to install.
set -e
cd "$(dirname "$0")"
if ! command -v cmake >/dev/null 2>&1 || ! command -v c++ >/dev/null 2>&1; then
    echo "error: cpp-counter needs cmake and a C++ compiler. On Debian/Ubuntu:" >&2
    echo "  apt-get install -y --no-install-recommends g++ make cmake pkg-config protobuf-compiler protobuf-compiler-grpc libprotobuf-dev libgrpc++-dev" >&2
    echo "(or run clients/cpp/install-deps.sh)" >&2
    exit 1
fi
# CMake refuses a build folder made for another source folder (a copied bot folder):
# start that one afresh
if [ -f build/CMakeCache.txt ] &&
   ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$(pwd -P)" build/CMakeCache.txt; then
    echo "setup: build/ was made for another folder; building afresh" >&2
    rm -rf build
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
# two parallel jobs fit CI's 2 cores; ONO99_BUILD_JOBS=N for a bigger machine
cmake --build build -j "${ONO99_BUILD_JOBS:-2}"
