// Rotary position embedding, in place, as engine/model's rope: for token t
// at position pos[t] and rotation pair i < n_rot/2, theta_i is
// pos · theta_scale^i by repeated float32 multiplication (theta_scale =
// base^(−2/n_rot), computed by the host in float64 and rounded), the angle
// is freq_scale · theta_i, and cos/sin are evaluated in double and rounded
// to float32 (the CPU's float32(math.Cos(float64(t)))). neox selects the
// rotate-half pairing (i, i + n_rot/2); otherwise pairs are (2i, 2i + 1).
//
// Launch: block (ROPE_THREADS), grid (n_heads, tokens). X holds `tokens`
// rows of row_stride floats; head h starts at h · head_dim.
#include "fc_port.h"

#define ROPE_THREADS 64

FC_KERNEL void __launch_bounds__(ROPE_THREADS)
rope_f32(float* X, const int* __restrict__ pos, int row_stride, int head_dim, int n_rot,
	float theta_scale, float freq_scale, int neox) {
	float* x = X + (fc_size)blockIdx.y * row_stride + (fc_size)blockIdx.x * head_dim;
	const int half = n_rot / 2;
	const float p = (float)pos[blockIdx.y];
	for (int i = threadIdx.x; i < half; i += ROPE_THREADS) {
		float theta = p;
		for (int k = 0; k < i; k++) theta *= theta_scale;
		const double a = (double)(freq_scale * theta);
		const float c = (float)cos(a), s = (float)sin(a);
		const int i0 = neox ? i : 2 * i, i1 = neox ? i + half : 2 * i + 1;
		const float x0 = x[i0], x1 = x[i1];
		x[i0] = x0 * c - x1 * s;
		x[i1] = x0 * s + x1 * c;
	}
}
