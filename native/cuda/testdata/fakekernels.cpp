// The fake driver's real kernels: with -DFAKE_KERNELS, fakecuda.c loads any
// CUBIN or PTX image NVRTC produced as a module of every kernel in
// ../kernels, compiled here for the host through the CPU shim, and
// cuLaunchKernel runs them on its grid and block with the arguments it was
// given. So engine/device's CUDA implementation (compile, load, launch
// shapes, argument order, copies) runs end to end without a GPU, computing
// what the shim computes: the twins' results bit for bit (one ulp apart
// where RoPE and SiLU take cos/sin/exp from glibc rather than Go).
#include "shim.h"

#include "act.cu"
#include "attn.cu"
#include "matmul.cu"
#include "matmul_tiled.cu"
#include "norm.cu"
#include "rope.cu"
#include "launch.h"
#include "kernels.h"

#include <cstring>
#include <utility>

static void** params; // the launch's kernelParams

template <typename... P, size_t... I> static void callWith(void (*k)(P...), std::index_sequence<I...>) {
	k(*(P*)params[I]...);
}
template <typename... P> static void call(void (*k)(P...)) { callWith(k, std::index_sequence_for<P...>{}); }

struct fakeKernel {
	const char* name;
	void (*run)();
};
#define KERNEL(name) {#name, [] { call(name); }}
static const fakeKernel kernels[] = {
	FC_SHIM_KERNELS,
	FC_SHIM_KERNELS_TILED,
};

static int launches;

extern "C" const void* fakeKernelFind(const char* name) {
	for (auto& k : kernels)
		if (strcmp(k.name, name) == 0) return &k;
	return nullptr;
}

extern "C" int fakeKernelLaunch(const void* f, unsigned gx, unsigned gy, unsigned bx, unsigned by, void** p) {
	const fakeKernel* k = (const fakeKernel*)f;
	if (k < kernels || k >= kernels + sizeof kernels / sizeof kernels[0]) return 0;
	gridDim.x = gx, gridDim.y = gy, blockDim.x = bx, blockDim.y = by;
	params = p;
	launch(k->run);
	launches++;
	return 1;
}

// Test hook: kernels run so far.
extern "C" int fakeKernelLaunches(void) { return launches; }
