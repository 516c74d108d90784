#!/usr/bin/env bash
# Installs the ONNX Runtime shared library that github.com/yalue/onnxruntime_go
# v1.27.0 is built against (its C API headers are those of ONNX Runtime
# 1.24.1, API level 24) and prints the library's path on standard output.
#
# The library comes from the npm package onnxruntime-node, which ships the
# official linux-x64 build as bin/napi-v6/linux/x64/libonnxruntime.so.1.
# Idempotent: when the library of this version is already installed, nothing
# is downloaded. Usage: bash .ci/install-onnxruntime.sh [DESTDIR]
# (default /usr/local/lib/onnxruntime). Export the printed path as
# ONNXRUNTIME_LIB.
set -euo pipefail

version=1.24.1
dest="${1:-/usr/local/lib/onnxruntime}"
lib="$dest/libonnxruntime.so.$version"

case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) arch=x64 ;;
  Linux/aarch64) arch=arm64 ;;
  *) echo "install-onnxruntime.sh: no onnxruntime-node build for $(uname -s)/$(uname -m)" >&2; exit 1 ;;
esac

if [ ! -s "$lib" ]; then
  command -v npm >/dev/null 2>&1 || { echo "install-onnxruntime.sh: npm is needed (apt-get install npm)" >&2; exit 1; }
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "onnxruntime-node@$version" >/dev/null)
  tar -xzf "$work/onnxruntime-node-$version.tgz" -C "$work" "package/bin/napi-v6/linux/$arch/libonnxruntime.so.1"
  mkdir -p "$dest"
  install -m 0644 "$work/package/bin/napi-v6/linux/$arch/libonnxruntime.so.1" "$lib.tmp"
  mv "$lib.tmp" "$lib"
  ln -sf "libonnxruntime.so.$version" "$dest/libonnxruntime.so.1"
  ln -sf "libonnxruntime.so.$version" "$dest/libonnxruntime.so"
fi
echo "$lib"
