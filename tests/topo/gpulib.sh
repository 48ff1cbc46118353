#!/bin/sh
# gpulib.sh - test_gpulib against a stand-in NVML (fake_nvml.so as libnvidia-ml.so.1).
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
B="${CC_BUILDDIR:-.}/tests/topo"
cp "$B/fake_nvml.so" "$T/libnvidia-ml.so.1" || { echo "1..0 # SKIP no fake_nvml.so"; exit 0; }
LD_LIBRARY_PATH="$T${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$B/test_gpulib"
