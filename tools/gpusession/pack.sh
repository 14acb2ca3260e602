#!/bin/bash
# pack.sh: prepares .devx/ at the repository root for a GPU session on the
# `device` tool's machine (x86-64 Linux with an NVIDIA GPU, CUDA's nvcc and
# CMake, no Go and no network). What it holds, 60 MiB with the tree, under
# the tool's 64 MiB:
#   flowchat.xz                   the app (x11 build, stripped) for synth, gpu, run and bench
#   native_cuda.test.xz,          make test-gpu's test binaries
#   engine_model.test.xz,
#   engine_ggml.test.xz           and engine/ggml's, for the host CPU's AMX tier (issue 18)
#   lib/                          the X11/GL libraries the app links, for an image without them
#   td/arch/rand-llama-gqa-F32.gguf   the one device fixture not in testdata/
#   llama-src.tar.xz              llama.cpp's source (LLAMA_SRC, default /tmp/llama.cpp), built there
#   run.sh, check.sh, setup.sh,   the session scripts (beside this file): all the checks, or a shorter set
#   cpu18.sh                      for a kernel change, issue 18 on the host CPU, and the setup they source
#   root.txt                      this checkout's path, where the test binaries look for testdata/
# The llama.cpp source leaves out the backends and examples the CUDA
# llama-bench build does not compile (the tree is near the 64 MiB limit).
# Usage: make gpu-pack [LLAMA_SRC=/path/to/llama.cpp]; then the device
# tool's run with command `bash .devx/run.sh` and carry [".devx"].
set -euo pipefail
root=$(git rev-parse --show-toplevel)
out=$root/.devx
llama=${LLAMA_SRC:-/tmp/llama.cpp}
shared=${FLOWCHAT_SHARED_TESTDATA:-$root/../shared/testdata}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$out"
mkdir -p "$out/lib" "$out/td/arch"
cd "$root"
go build -tags x11 -ldflags "-s -w" -o "$tmp/flowchat" ./app
go test -c -tags x11 -o "$tmp/native_cuda.test" ./native/cuda
go test -c -tags x11 -o "$tmp/engine_model.test" ./engine/model
go test -c -o "$tmp/engine_ggml.test" ./engine/ggml
for f in flowchat native_cuda.test engine_model.test engine_ggml.test; do xz -T0 -6 -c "$tmp/$f" > "$out/$f.xz"; done
ldd "$tmp/flowchat" | awk '/=> \// && $1 !~ /^(libc|libm|libdl|libpthread|ld-linux)/ {print $3}' | xargs -r -I{} cp -L {} "$out/lib/"
if [ -f "$shared/arch/rand-llama-gqa-F32.gguf" ]; then
	cp "$shared/arch/rand-llama-gqa-F32.gguf" "$out/td/arch/"
else
	echo "pack: $shared/arch/rand-llama-gqa-F32.gguf not found: that fixture's GPU test will skip" >&2
fi
if [ -f "$llama/CMakeLists.txt" ]; then
	tar cJf "$out/llama-src.tar.xz" -C "$llama" --exclude=build --exclude=examples/server --exclude=examples/llama.swiftui --exclude=examples/llama.android --exclude=ggml/src/ggml-vulkan --exclude=ggml/src/ggml-sycl --exclude=ggml/src/ggml-metal --exclude=ggml/src/ggml-cann --exclude=ggml/src/ggml-opencl --exclude=ggml/src/ggml-kompute CMakeLists.txt cmake common examples ggml include src $(cd "$llama" && ls -d pocs tools vendor 2>/dev/null)
else
	echo "pack: no llama.cpp source at $llama (LLAMA_SRC): the session will run without llama-bench" >&2
fi
cp "$root"/tools/gpusession/{run,check,setup,cpu18,env18}.sh "$out/"
echo "$root" > "$out/root.txt"
size=$( (git ls-files -z | xargs -0 stat -c %s; find "$out" -type f -exec stat -c %s {} +) | awk '{s += $1} END {print s}')
echo "pack: .devx ready; the tree and .devx are $((size >> 20)) MiB of the device tool's 64"
