# setup.sh: sourced by run.sh and check.sh, from the repository root on the
# device machine. It sets R (the root), D (.devx), O ($OUT), FC (the app)
# and el/left/log (seconds since the start, left of BUDGET, a stamped
# line); writes the card's line to $O/main.txt; starts llama.cpp's CUDA
# llama-bench build in the background (LB, its pid; log /tmp/llama-build.txt;
# LLAMA_CUDA=OFF builds its CPU backend alone, with llama-cli, for cpu18.sh);
# unpacks the app and the test binaries; and starts `flowchat synth` of
# $FILES (shape:type …) into /tmp/m in the background (SY, its pid).
set -u
R=$PWD; D=$R/.devx; O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
left() { echo $(( ${BUDGET:-420} - $(el) )); }
log() { echo "[$(el)s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv; nvcc --version | tail -1; nproc; } > "$O/main.txt" 2>&1
LB=
if [ -f "$D/llama-src.tar.xz" ]; then
	mkdir -p /tmp/ll && tar xJf "$D/llama-src.tar.xz" -C /tmp/ll
	( cd /tmp/ll && nice -n 19 cmake -B b -G Ninja -DGGML_CUDA=${LLAMA_CUDA:-ON} -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCH:-90} -DGGML_NATIVE=ON -DLLAMA_CURL=OFF \
		-DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF > /tmp/llama-build.txt 2>&1 \
		&& nice -n 19 cmake --build b --target llama-bench $([ "${LLAMA_CUDA:-ON}" = OFF ] && echo llama-cli) -j "$(nproc)" >> /tmp/llama-build.txt 2>&1; echo "llama build rc=$? at $(el)s" >> /tmp/llama-build.txt ) &
	LB=$!
fi
xz -dc "$D/flowchat.xz" > /tmp/flowchat && chmod +x /tmp/flowchat
for t in native_cuda engine_model engine_ggml; do xz -dc "$D/$t.test.xz" > /tmp/$t.test; chmod +x /tmp/$t.test; done
if ldd /tmp/flowchat | grep -q "not found"; then export LD_LIBRARY_PATH=$D/lib; fi
FC=/tmp/flowchat
# The test binaries find testdata/ by the path they were built at (root.txt).
built=$(cat "$D/root.txt" 2>/dev/null)
[ -n "$built" ] && [ ! -e "$built" ] && mkdir -p "$(dirname "$built")" && ln -s "$R" "$built"
export FLOWCHAT_SHARED_TESTDATA=$D/td
mkdir -p /tmp/m
( for s in $FILES; do sh=${s%:*}; ty=${s#*:}; nice -n 5 $FC synth --shape "$sh" --type "$ty" --out "/tmp/m/$sh-$ty.gguf"; done ) > /tmp/synth.txt 2>&1 &
SY=$!
