#!/bin/sh
# Builds the bot into build/{{TARGET}}: what bot.toml's `setup` runs, in this folder.
set -e
cd "$(dirname "$0")"
if ! command -v cmake >/dev/null 2>&1 || ! command -v c++ >/dev/null 2>&1; then
    echo "error: {{NAME}} needs cmake and a C++ compiler. On Debian/Ubuntu:" >&2
    echo "  apt-get install -y --no-install-recommends g++ make cmake pkg-config protobuf-compiler protobuf-compiler-grpc libprotobuf-dev libgrpc++-dev" >&2
    exit 1
fi
# CMake refuses a build folder made for another source folder (a copied bot): start afresh
if [ -f build/CMakeCache.txt ] &&
   ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$(pwd -P)" build/CMakeCache.txt; then
    rm -rf build
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "${ONO99_BUILD_JOBS:-2}"
