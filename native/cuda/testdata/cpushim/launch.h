// launch.h: the shim's globals and its launcher, shared by harness.cpp and
// the fake driver's kernels (../fakekernels.cpp). Include once per program,
// after shim.h.
#pragma once
#include <thread>
#include <vector>

thread_local fc_dim3 threadIdx, blockIdx;
fc_dim3 blockDim, gridDim;
thread_local fc_shim_warp* fc_shim_my_warp;
thread_local int fc_shim_lane;
pthread_barrier_t fc_shim_block_barrier;

// launch runs k over gridDim × blockDim (set by the caller): blocks one
// after another, the threads of a block at once.
static inline void launch(void (*k)()) {
	unsigned nt = blockDim.x * blockDim.y, nw = (nt + FC_WARP_SIZE - 1) / FC_WARP_SIZE;
	std::vector<fc_shim_warp> warps(nw);
	for (unsigned w = 0; w < nw; w++)
		pthread_barrier_init(&warps[w].bar, nullptr, std::min<unsigned>(FC_WARP_SIZE, nt - w * FC_WARP_SIZE));
	pthread_barrier_init(&fc_shim_block_barrier, nullptr, nt);
	for (unsigned by = 0; by < gridDim.y; by++)
		for (unsigned bx = 0; bx < gridDim.x; bx++) {
			std::vector<std::thread> th;
			for (unsigned t = 0; t < nt; t++)
				th.emplace_back([=, &warps] {
					blockIdx.x = bx, blockIdx.y = by;
					threadIdx.x = t % blockDim.x, threadIdx.y = t / blockDim.x;
					fc_shim_my_warp = &warps[t / FC_WARP_SIZE];
					fc_shim_lane = t % FC_WARP_SIZE;
					k();
				});
			for (auto& x : th) x.join();
		}
}

