// RMSNorm: Y[t][i] = X[t][i] · (1 / sqrtf(mean_i(X[t][i]²) + eps)) · Wg[i],
// as engine/model's rmsNorm (squares rounded to float32, summed in float64,
// the mean rounded to float32; correctly rounded sqrtf and division) and
// then the gain (omitted when Wg is null).
//
// Launch: one block of NORM_THREADS per row t; grid (rows). Thread k sums
// the squares of elements k, k + NORM_THREADS, …; fc_block_sum_d combines.
// X and Y may alias.
#include "fc_port.h"

#define NORM_THREADS 256

FC_KERNEL void __launch_bounds__(NORM_THREADS)
rms_norm_f32(const float* X, const float* __restrict__ Wg, float* Y, int n, float eps) {
	__shared__ double sh[FC_WARP_SIZE];
	const float* x = X + (fc_size)blockIdx.x * n;
	float* y = Y + (fc_size)blockIdx.x * n;
	double sum = 0.0;
	for (int i = threadIdx.x; i < n; i += NORM_THREADS) {
		float v = x[i];
		sum += (double)(v * v);
	}
	sum = fc_block_sum_d(sum, sh);
	const float mean = (float)(sum / (double)n);
	const float scale = 1.0f / sqrtf(mean + eps);
	for (int i = threadIdx.x; i < n; i += NORM_THREADS) {
		float v = x[i] * scale;
		y[i] = Wg ? v * Wg[i] : v;
	}
}
