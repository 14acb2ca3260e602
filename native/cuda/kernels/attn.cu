// Decode attention over a float32, F16 or Q8_0 KV cache, one query token: for
// query head h (KV head h / (n_head / n_kv_head), grouped-query attention),
//   s_j = scale · q·k_j, p_j = exp(s_j − max s) / Σ exp, out = Σ p_j v_j
// over the n_kv cached positions. This is the classic (unsplit) softmax;
// the split FlashDecoding++ form (attn_split_*, attn_combine_*) and the
// tiled causal prefill (attn_prefill_*) follow below.
//
// Launch: one block of ATTN_THREADS per query head; grid (n_head). Q is
// n_head·head_dim floats, K and V hold n_kv rows of kv_stride elements
// (float32, binary16 for the _f16 kernel, Q8_0 blocks for _q8_0: whole
// blocks, head_dim a multiple of 32; widened exactly as read; KV head g
// at g·head_dim), S is scratch of n_head·n_kv floats, O
// n_head·head_dim. Warp w scores keys w, w + nw, …, its lanes splitting
// the dimensions; then thread k owns output dimensions k, k +
// ATTN_THREADS, ….
#include "fc_port.h"

#define ATTN_THREADS 128

// A Q8_0 cache row is kv_stride/32 blocks of fp16 d and 32 int8 q (34
// bytes); element i of the cache is d·q of block i/32.
struct attn_q8_0 {
	fc_u8 b[34];
};

// attn_load is element i of a cache, widened exactly as it is read (for
// Q8_0 as ggml's DequantizeRow: (float)q · d).
FC_DEVICE float attn_load(const float* p, fc_size i) { return p[i]; }
FC_DEVICE float attn_load(const fc_u16* p, fc_size i) { return fc_half_to_float(p[i]); }
FC_DEVICE float attn_load(const attn_q8_0* p, fc_size i) {
	const fc_u8* blk = p[i / 32].b;
	return (float)(fc_i8)blk[2 + i % 32] * fc_half_to_float(fc_load_u16(blk));
}

// attn_head is attn_decode's work for query head h, by the whole block
// (attn_combine_* runs it too, for the heads it recomputes).
template <typename T>
FC_DEVICE void attn_head(const float* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
	float* __restrict__ S, float* __restrict__ O, int n_kv, int head_dim, int n_head, int n_kv_head,
	int kv_stride, float scale, int h, float* sh) {
	const int g = h / (n_head / n_kv_head);
	const int lane = threadIdx.x % FC_WARP_SIZE, w = threadIdx.x / FC_WARP_SIZE;
	const int nw = ATTN_THREADS / FC_WARP_SIZE;
	const float* q = Q + (fc_size)h * head_dim;
	const fc_size kv0 = (fc_size)g * head_dim; // KV head g's first element in a row
	float* s = S + (fc_size)h * n_kv;

	for (int j = w; j < n_kv; j += nw) {
		const fc_size kj = (fc_size)j * kv_stride + kv0;
		float d = 0.0f;
		for (int i = lane; i < head_dim; i += FC_WARP_SIZE) d = fmaf(q[i], attn_load(K, kj + i), d);
		d = fc_warp_sum(d);
		if (lane == 0) s[j] = d * scale;
	}
	__syncthreads();
	float m = -__int_as_float(0x7f800000);
	for (int j = threadIdx.x; j < n_kv; j += ATTN_THREADS) m = fmaxf(m, s[j]);
	m = fc_block_max(m, sh);
	float sum = 0.0f;
	for (int j = threadIdx.x; j < n_kv; j += ATTN_THREADS) {
		const float e = fc_expf_ggml(s[j] - m);
		s[j] = e;
		sum += e;
	}
	const float inv = 1.0f / fc_block_sum(sum, sh); // its barriers publish s
	for (int i = threadIdx.x; i < head_dim; i += ATTN_THREADS) {
		float acc = 0.0f;
		for (int j = 0; j < n_kv; j++) acc = fmaf(s[j], attn_load(V, (fc_size)j * kv_stride + kv0 + i), acc);
		O[(fc_size)h * head_dim + i] = acc * inv;
	}
}

template <typename T>
FC_DEVICE void attn_decode(const float* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
	float* __restrict__ S, float* __restrict__ O, int n_kv, int head_dim, int n_head, int n_kv_head,
	int kv_stride, float scale) {
	__shared__ float sh[FC_WARP_SIZE];
	attn_head<T>(Q, K, V, S, O, n_kv, head_dim, n_head, n_kv_head, kv_stride, scale, blockIdx.x, sh);
}

FC_KERNEL void __launch_bounds__(ATTN_THREADS)
attn_decode_f32(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
	float* __restrict__ S, float* __restrict__ O, int n_kv, int head_dim, int n_head, int n_kv_head,
	int kv_stride, float scale) {
	attn_decode<float>(Q, K, V, S, O, n_kv, head_dim, n_head, n_kv_head, kv_stride, scale);
}

FC_KERNEL void __launch_bounds__(ATTN_THREADS)
attn_decode_f16(const float* __restrict__ Q, const fc_u16* __restrict__ K, const fc_u16* __restrict__ V,
	float* __restrict__ S, float* __restrict__ O, int n_kv, int head_dim, int n_head, int n_kv_head,
	int kv_stride, float scale) {
	attn_decode<fc_u16>(Q, K, V, S, O, n_kv, head_dim, n_head, n_kv_head, kv_stride, scale);
}

FC_KERNEL void __launch_bounds__(ATTN_THREADS)
attn_decode_q8_0(const float* __restrict__ Q, const attn_q8_0* __restrict__ K, const attn_q8_0* __restrict__ V,
	float* __restrict__ S, float* __restrict__ O, int n_kv, int head_dim, int n_head, int n_kv_head,
	int kv_stride, float scale) {
	attn_decode<attn_q8_0>(Q, K, V, S, O, n_kv, head_dim, n_head, n_kv_head, kv_stride, scale);
}

// kv_store_f16: Y[i] = X[i] rounded to binary16 (to nearest even), the
// F16 cache's row store: ggml's FP32ToFP16 bit for bit on every non-NaN.
// Launch: block (ATTN_THREADS), any grid; a grid-stride loop covers n.
FC_KERNEL void __launch_bounds__(ATTN_THREADS)
kv_store_f16(const float* __restrict__ X, fc_u16* __restrict__ Y, int n) {
	for (int i = blockIdx.x * ATTN_THREADS + threadIdx.x; i < n; i += gridDim.x * ATTN_THREADS) Y[i] = fc_float_to_half(X[i]);
}

// kv_store_q8_0: the n floats of X (n a multiple of 32) as Q8_0 blocks at
// Y, as the CPU's Q8_0 cache stores them (ggml's quantize_row_q8_0,
// engine/ggml's QuantizeActivation): amax = max |x|, d = amax/127 stored
// as fp16, q = x·(127/amax) rounded to nearest even (0 where amax is 0).
// Launch: block (ATTN_THREADS), any grid; thread t of the grid-stride
// loop quantizes block t.
FC_KERNEL void __launch_bounds__(ATTN_THREADS)
kv_store_q8_0(const float* __restrict__ X, fc_u8* __restrict__ Y, int n) {
	for (int b = blockIdx.x * ATTN_THREADS + threadIdx.x; b < n / 32; b += gridDim.x * ATTN_THREADS) {
		const float* x = X + (fc_size)b * 32;
		fc_u8* y = Y + (fc_size)b * 34;
		float amax = 0.0f;
		for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(x[j]));
		const float d = amax / 127.0f, id = amax != 0.0f ? 127.0f / amax : 0.0f;
		const fc_u16 dh = fc_float_to_half(d);
		y[0] = (fc_u8)dh, y[1] = (fc_u8)(dh >> 8);
		for (int j = 0; j < 32; j++) y[2 + j] = (fc_u8)(fc_i8)(int)rintf(x[j] * id);
	}
}

// ---- Split decode: FlashDecoding++'s asynchronous softmax, unified max ----
//
// One query token, keys cut into chunks of ATTN_CHUNK: block (h, c) scores
// chunk c of head h into shared memory, then e_j = exp(s_j − φ_h) against
// the head's unified max φ_h (PHI[h], no maximum first) and writes the
// unnormalized partial Σ e_j·v_j, Σ e_j and the chunk's largest score; a
// chunk whose largest score is more than ATTN_PHI_ABOVE above φ (or φ NaN:
// not known yet) writes no partial. attn_combine_* then, one block per
// head: M = the chunks' largest score; when every chunk took φ and M is no
// more than ATTN_PHI_BELOW below it, out = Σ_c partial_c · (1/Σ_c sum_c)
// and φ becomes max(φ, M); otherwise φ becomes M and the block recomputes
// the head with attn_decode's exact-max softmax (attn_head). This is
// engine/model's CPU rule (attn_split.go: phiAbove 32, phiBelow 48, the
// first step of a head cold), so φ evolves as on the CPU.
//
// SCRATCH (floats): [n_head·n_kv] the fallback's scores, then per (h, c)
// [n_head·nc·head_dim] partials, [n_head·nc] sums, [n_head·nc] maxima, nc
// = ceil(n_kv / ATTN_CHUNK). Launch: attn_split_* grid (n_head, nc), then
// attn_combine_* grid (n_head), both blocks of ATTN_THREADS.
#define ATTN_CHUNK 256
#define ATTN_PHI_ABOVE 32
#define ATTN_PHI_BELOW 48

template <typename T>
FC_DEVICE void attn_split(const float* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
	const float* __restrict__ PHI, float* __restrict__ SCR, int n_kv, int head_dim, int n_head, int n_kv_head,
	int kv_stride, float scale) {
	__shared__ float sc[ATTN_CHUNK];
	__shared__ float sh[FC_WARP_SIZE];
	const int h = blockIdx.x, c = blockIdx.y, nc = (n_kv + ATTN_CHUNK - 1) / ATTN_CHUNK;
	const int g = h / (n_head / n_kv_head);
	const int lane = threadIdx.x % FC_WARP_SIZE, w = threadIdx.x / FC_WARP_SIZE;
	const int nw = ATTN_THREADS / FC_WARP_SIZE;
	const int j0 = c * ATTN_CHUNK, n = min(ATTN_CHUNK, n_kv - j0);
	const float* q = Q + (fc_size)h * head_dim;
	const fc_size kv0 = (fc_size)g * head_dim;
	const float phi = PHI[h];
	for (int j = w; j < n; j += nw) {
		const fc_size kj = (fc_size)(j0 + j) * kv_stride + kv0;
		float d = 0.0f;
		for (int i = lane; i < head_dim; i += FC_WARP_SIZE) d = fmaf(q[i], attn_load(K, kj + i), d);
		d = fc_warp_sum(d);
		if (lane == 0) sc[j] = d * scale;
	}
	__syncthreads();
	float m = -__int_as_float(0x7f800000);
	for (int j = threadIdx.x; j < n; j += ATTN_THREADS) m = fmaxf(m, sc[j]);
	m = fc_block_max(m, sh);
	float sum = 0.0f;
	for (int j = threadIdx.x; j < n; j += ATTN_THREADS) {
		const float e = fc_expf_ggml(sc[j] - phi);
		sc[j] = e;
		sum += e;
	}
	sum = fc_block_sum(sum, sh); // its barriers publish sc
	const fc_size hc = (fc_size)h * nc + c;
	float* part = SCR + (fc_size)n_head * n_kv;
	float* sums = part + (fc_size)n_head * nc * head_dim;
	if (threadIdx.x == 0) sums[hc] = sum, sums[(fc_size)n_head * nc + hc] = m;
	if (!(m - phi <= (float)ATTN_PHI_ABOVE)) return; // the whole block: m is the block's
	for (int i = threadIdx.x; i < head_dim; i += ATTN_THREADS) {
		float acc = 0.0f;
		for (int j = 0; j < n; j++) acc = fmaf(sc[j], attn_load(V, (fc_size)(j0 + j) * kv_stride + kv0 + i), acc);
		part[hc * head_dim + i] = acc;
	}
}

template <typename T>
FC_DEVICE void attn_combine(const float* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
	float* __restrict__ PHI, float* __restrict__ SCR, float* __restrict__ O, int n_kv, int head_dim, int n_head,
	int n_kv_head, int kv_stride, float scale) {
	__shared__ float sh[FC_WARP_SIZE];
	const int h = blockIdx.x, nc = (n_kv + ATTN_CHUNK - 1) / ATTN_CHUNK;
	const float* part = SCR + (fc_size)n_head * n_kv;
	const float* sums = part + (fc_size)n_head * nc * head_dim;
	const float* maxs = sums + (fc_size)n_head * nc;
	const float phi = PHI[h];
	float m = -__int_as_float(0x7f800000);
	bool ok = true;
	for (int c = 0; c < nc; c++) {
		const float mc = maxs[(fc_size)h * nc + c];
		m = fmaxf(m, mc);
		ok = ok && mc - phi <= (float)ATTN_PHI_ABOVE;
	}
	ok = ok && m - phi >= -(float)ATTN_PHI_BELOW;
	__syncthreads(); // every thread has read φ
	if (threadIdx.x == 0) PHI[h] = ok ? fmaxf(phi, m) : m;
	if (!ok) {
		attn_head<T>(Q, K, V, SCR, O, n_kv, head_dim, n_head, n_kv_head, kv_stride, scale, h, sh);
		return;
	}
	float sum = 0.0f;
	for (int c = 0; c < nc; c++) sum += sums[(fc_size)h * nc + c];
	const float inv = 1.0f / sum;
	for (int i = threadIdx.x; i < head_dim; i += ATTN_THREADS) {
		float acc = 0.0f;
		for (int c = 0; c < nc; c++) acc += part[((fc_size)h * nc + c) * head_dim + i];
		O[(fc_size)h * head_dim + i] = acc * inv;
	}
}

// ---- Tiled causal prefill (flash-style) ----
//
// n_tok query tokens at positions n_past … n_past + n_tok − 1, whose K/V
// rows are already in the cache: token t sees cache rows [0, n_past + t].
// Block (h, b) takes query rows t0 = b·ATTN_BQ … t0 + ATTN_BQ − 1 of head h
// and walks the keys its last row sees in tiles of ATTN_BK, each staged in
// shared memory as floats (widened as attn_load reads them). Thread k
// scores the pair (row k / ATTN_BK, key k % ATTN_BK): s = scale ·
// Σ_i fmaf(q_i, k_i) in i order, −Inf where masked. Thread r < ATTN_BQ then
// keeps row r's online softmax: m' = fmaxf over m and the tile's scores in
// key order, α = exp(m − m') (0 while m is −Inf), p_j = exp(s_j − m') (0
// where masked), l = l·α + Σ_j p_j (summed in key order). Output entries
// e = k, k + ATTN_THREADS, … of the tile's [ATTN_BQ × head_dim] (row e /
// head_dim) are o = o·α + Σ_j fmaf(p_j, v_j) in key order, and at the end
// out = o · (1/l). No warp operation: the arithmetic is the same at any
// warp size. Q and O are n_tok rows of n_head·head_dim floats; head_dim ≤
// ATTN_MAX_HD. Launch: grid (n_head, ceil(n_tok / ATTN_BQ)), block
// ATTN_THREADS (= ATTN_BQ·ATTN_BK). Shared: 41,632 bytes at the limits.
#define ATTN_BQ 8
#define ATTN_BK 16
#define ATTN_MAX_HD 256
static_assert(ATTN_BQ * ATTN_BK == ATTN_THREADS, "attn_prefill: one (row, key) pair per thread");

template <typename T>
FC_DEVICE void attn_prefill(const float* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
	float* __restrict__ O, int n_tok, int n_past, int head_dim, int n_head, int n_kv_head, int kv_stride,
	float scale) {
	__shared__ float kt[ATTN_BK][ATTN_MAX_HD + 1]; // +1: the pairs' key rows in different banks
	__shared__ float vt[ATTN_BK][ATTN_MAX_HD];
	__shared__ float ot[ATTN_BQ * ATTN_MAX_HD];
	__shared__ float ps[ATTN_BQ][ATTN_BK];
	__shared__ float rm[ATTN_BQ], rl[ATTN_BQ], ra[ATTN_BQ];
	const float ninf = -__int_as_float(0x7f800000);
	const int h = blockIdx.x, t0 = blockIdx.y * ATTN_BQ;
	const int g = h / (n_head / n_kv_head);
	const int rows = min(ATTN_BQ, n_tok - t0), n_end = n_past + t0 + rows;
	const fc_size kv0 = (fc_size)g * head_dim, qs = (fc_size)n_head * head_dim;
	const int pr = threadIdx.x / ATTN_BK, pj = threadIdx.x % ATTN_BK;
	const float* q = Q + (fc_size)(t0 + pr) * qs + (fc_size)h * head_dim;
	for (int e = threadIdx.x; e < ATTN_BQ * head_dim; e += ATTN_THREADS) ot[e] = 0.0f;
	if (threadIdx.x < ATTN_BQ) rm[threadIdx.x] = ninf, rl[threadIdx.x] = 0.0f;
	for (int kb = 0; kb < n_end; kb += ATTN_BK) {
		const int nk = min(ATTN_BK, n_end - kb);
		__syncthreads(); // the previous tile is no longer read
		for (int e = threadIdx.x; e < nk * head_dim; e += ATTN_THREADS) {
			const int j = e / head_dim, i = e % head_dim;
			const fc_size at = (fc_size)(kb + j) * kv_stride + kv0 + i;
			kt[j][i] = attn_load(K, at);
			vt[j][i] = attn_load(V, at);
		}
		__syncthreads();
		float s = ninf;
		if (pr < rows && pj < nk && kb + pj <= n_past + t0 + pr) {
			float d = 0.0f;
			for (int i = 0; i < head_dim; i++) d = fmaf(q[i], kt[pj][i], d);
			s = d * scale;
		}
		ps[pr][pj] = s;
		__syncthreads();
		if (threadIdx.x < ATTN_BQ) {
			const int r = threadIdx.x;
			const float mo = rm[r];
			float mn = mo;
			for (int j = 0; j < ATTN_BK; j++) mn = fmaxf(mn, ps[r][j]);
			const float a = mo == ninf ? 0.0f : fc_expf_ggml(mo - mn);
			float sum = 0.0f;
			for (int j = 0; j < ATTN_BK; j++) {
				const float p = ps[r][j] == ninf ? 0.0f : fc_expf_ggml(ps[r][j] - mn);
				ps[r][j] = p;
				sum += p;
			}
			rl[r] = rl[r] * a + sum, rm[r] = mn, ra[r] = a;
		}
		__syncthreads();
		for (int e = threadIdx.x; e < ATTN_BQ * head_dim; e += ATTN_THREADS) {
			const int r = e / head_dim, i = e % head_dim;
			float o = ot[e] * ra[r];
			for (int j = 0; j < nk; j++) o = fmaf(ps[r][j], vt[j][i], o);
			ot[e] = o;
		}
	}
	for (int e = threadIdx.x; e < rows * head_dim; e += ATTN_THREADS) {
		const int r = e / head_dim, i = e % head_dim;
		O[(fc_size)(t0 + r) * qs + (fc_size)h * head_dim + i] = ot[e] * (1.0f / rl[r]);
	}
}

// ---- Grouped causal prefill (heads of at most ATTN_G_HD) ----
//
// The same arithmetic as attn_prefill, row for row (so the same twin), on
// a wider block: ATTN_G_THREADS threads take ATTN_G_ROWS query rows that
// share one KV head, nh query heads of the group × tq tokens (nh the
// largest divisor of the group ≤ 8, tq = ATTN_G_ROWS / nh), so each K/V
// tile staged in shared memory serves nh·tq rows instead of 8, and the Q
// rows are staged once. Row ρ is head h0 + ρ / tq, token t0 + ρ % tq.
// A row's arithmetic does not depend on which rows share its block: tiles
// of ATTN_BK keys from key 0; a tile past a row's last key (the block's
// last token sees further) is all −Inf for it, so m, l and o pass through
// it unchanged (α = 1, p = 0; V is finite). The scores' maximum and
// exponentials are computed by all threads, ATTN_BK a row (each thread
// takes the row's fmaxf chain in key order, the same value), and the sum
// by one thread a row in key order, as attn_prefill. Each thread keeps its
// output entries e = k, k + ATTN_G_THREADS, … in registers. Launch: grid
// (n_head / nh, ceil(n_tok / tq)), block ATTN_G_THREADS; head_dim ≤
// ATTN_G_HD. Shared: 37,568 bytes.
#define ATTN_G_ROWS 32
#define ATTN_G_THREADS 256
#define ATTN_G_HD 128
#define ATTN_G_OUT (ATTN_G_ROWS * ATTN_G_HD / ATTN_G_THREADS)
static_assert(ATTN_G_ROWS * ATTN_BK % ATTN_G_THREADS == 0, "attn_prefill_g: whole pairs a thread");

// attn_group_heads is nh: the largest divisor of a KV head's query heads
// that is at most 8.
FC_DEVICE int attn_group_heads(int grp) {
	int nh = 1;
	for (int d = 2; d <= 8; d++)
		if (grp % d == 0) nh = d;
	return nh;
}

template <typename T>
FC_DEVICE void attn_prefill_g(const float* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
	float* __restrict__ O, int n_tok, int n_past, int head_dim, int n_head, int n_kv_head, int kv_stride,
	float scale) {
	__shared__ float qt[ATTN_G_ROWS][ATTN_G_HD + 1]; // +1: a warp's key rows in different banks
	__shared__ float kt[ATTN_BK][ATTN_G_HD + 1];
	__shared__ float vt[ATTN_BK][ATTN_G_HD];
	__shared__ float ps[ATTN_G_ROWS][ATTN_BK], pe[ATTN_G_ROWS][ATTN_BK];
	__shared__ float rm[ATTN_G_ROWS], rl[ATTN_G_ROWS], ra[ATTN_G_ROWS], rn[ATTN_G_ROWS];
	const float ninf = -__int_as_float(0x7f800000);
	const int tid = threadIdx.x;
	const int grp = n_head / n_kv_head, nh = attn_group_heads(grp), tq = ATTN_G_ROWS / nh, nrow = nh * tq;
	const int h0 = blockIdx.x * nh, g = h0 / grp, t0 = blockIdx.y * tq;
	const int trows = min(tq, n_tok - t0), n_end = n_past + t0 + trows;
	const fc_size kv0 = (fc_size)g * head_dim, qs = (fc_size)n_head * head_dim;
	for (int e = tid; e < nrow * head_dim; e += ATTN_G_THREADS) {
		const int r = e / head_dim, i = e % head_dim, t = r % tq;
		qt[r][i] = t < trows ? Q[(fc_size)(t0 + t) * qs + (fc_size)(h0 + r / tq) * head_dim + i] : 0.0f;
	}
	if (tid < ATTN_G_ROWS) rm[tid] = ninf, rl[tid] = 0.0f;
	float o[ATTN_G_OUT];
#pragma unroll
	for (int m = 0; m < ATTN_G_OUT; m++) o[m] = 0.0f;
	for (int kb = 0; kb < n_end; kb += ATTN_BK) {
		const int nk = min(ATTN_BK, n_end - kb);
		__syncthreads(); // the previous tile is no longer read (and Q is staged)
		for (int e = tid; e < nk * head_dim; e += ATTN_G_THREADS) {
			const int j = e / head_dim, i = e % head_dim;
			const fc_size at = (fc_size)(kb + j) * kv_stride + kv0 + i;
			kt[j][i] = attn_load(K, at);
			vt[j][i] = attn_load(V, at);
		}
		__syncthreads();
#pragma unroll
		for (int p = tid; p < ATTN_G_ROWS * ATTN_BK; p += ATTN_G_THREADS) {
			const int r = p / ATTN_BK, j = p % ATTN_BK, t = r % tq;
			float s = ninf;
			if (r < nrow && t < trows && j < nk && kb + j <= n_past + t0 + t) {
				float d = 0.0f;
				for (int i = 0; i < head_dim; i++) d = fmaf(qt[r][i], kt[j][i], d);
				s = d * scale;
			}
			ps[r][j] = s;
		}
		__syncthreads();
#pragma unroll
		for (int p = tid; p < ATTN_G_ROWS * ATTN_BK; p += ATTN_G_THREADS) {
			const int r = p / ATTN_BK, j = p % ATTN_BK;
			float mn = rm[r];
			for (int jj = 0; jj < ATTN_BK; jj++) mn = fmaxf(mn, ps[r][jj]);
			pe[r][j] = ps[r][j] == ninf ? 0.0f : fc_expf_ggml(ps[r][j] - mn);
			if (j == 0) rn[r] = mn;
		}
		__syncthreads();
		if (tid < ATTN_G_ROWS) {
			const int r = tid;
			const float mo = rm[r], mn = rn[r];
			const float a = mo == ninf ? 0.0f : fc_expf_ggml(mo - mn);
			float sum = 0.0f;
			for (int j = 0; j < ATTN_BK; j++) sum += pe[r][j];
			rl[r] = rl[r] * a + sum, rm[r] = mn, ra[r] = a;
		}
		__syncthreads();
#pragma unroll
		for (int m = 0; m < ATTN_G_OUT; m++) {
			const int e = tid + m * ATTN_G_THREADS;
			if (e < nrow * head_dim) {
				const int r = e / head_dim, i = e % head_dim;
				float v = o[m] * ra[r];
				for (int j = 0; j < nk; j++) v = fmaf(pe[r][j], vt[j][i], v);
				o[m] = v;
			}
		}
	}
#pragma unroll
	for (int m = 0; m < ATTN_G_OUT; m++) {
		const int e = tid + m * ATTN_G_THREADS;
		if (e < nrow * head_dim) {
			const int r = e / head_dim, i = e % head_dim, t = r % tq;
			if (t < trows) O[(fc_size)(t0 + t) * qs + (fc_size)(h0 + r / tq) * head_dim + i] = o[m] * (1.0f / rl[r]);
		}
	}
}

FC_KERNEL void __launch_bounds__(ATTN_G_THREADS)
attn_prefill_g_f32(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
	float* __restrict__ O, int n_tok, int n_past, int head_dim, int n_head, int n_kv_head, int kv_stride,
	float scale) {
	attn_prefill_g<float>(Q, K, V, O, n_tok, n_past, head_dim, n_head, n_kv_head, kv_stride, scale);
}

FC_KERNEL void __launch_bounds__(ATTN_G_THREADS)
attn_prefill_g_f16(const float* __restrict__ Q, const fc_u16* __restrict__ K, const fc_u16* __restrict__ V,
	float* __restrict__ O, int n_tok, int n_past, int head_dim, int n_head, int n_kv_head, int kv_stride,
	float scale) {
	attn_prefill_g<fc_u16>(Q, K, V, O, n_tok, n_past, head_dim, n_head, n_kv_head, kv_stride, scale);
}

FC_KERNEL void __launch_bounds__(ATTN_G_THREADS)
attn_prefill_g_q8_0(const float* __restrict__ Q, const attn_q8_0* __restrict__ K, const attn_q8_0* __restrict__ V,
	float* __restrict__ O, int n_tok, int n_past, int head_dim, int n_head, int n_kv_head, int kv_stride,
	float scale) {
	attn_prefill_g<attn_q8_0>(Q, K, V, O, n_tok, n_past, head_dim, n_head, n_kv_head, kv_stride, scale);
}

FC_KERNEL void __launch_bounds__(ATTN_THREADS)
attn_split_f32(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
	const float* __restrict__ PHI, float* __restrict__ SCR, int n_kv, int head_dim, int n_head, int n_kv_head,
	int kv_stride, float scale) {
	attn_split<float>(Q, K, V, PHI, SCR, n_kv, head_dim, n_head, n_kv_head, kv_stride, scale);
}

FC_KERNEL void __launch_bounds__(ATTN_THREADS)
attn_combine_f32(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
	float* __restrict__ PHI, float* __restrict__ SCR, float* __restrict__ O, int n_kv, int head_dim, int n_head,
	int n_kv_head, int kv_stride, float scale) {
	attn_combine<float>(Q, K, V, PHI, SCR, O, n_kv, head_dim, n_head, n_kv_head, kv_stride, scale);
}

FC_KERNEL void __launch_bounds__(ATTN_THREADS)
attn_prefill_f32(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
	float* __restrict__ O, int n_tok, int n_past, int head_dim, int n_head, int n_kv_head, int kv_stride,
	float scale) {
	attn_prefill<float>(Q, K, V, O, n_tok, n_past, head_dim, n_head, n_kv_head, kv_stride, scale);
}

FC_KERNEL void __launch_bounds__(ATTN_THREADS)
attn_split_f16(const float* __restrict__ Q, const fc_u16* __restrict__ K, const fc_u16* __restrict__ V,
	const float* __restrict__ PHI, float* __restrict__ SCR, int n_kv, int head_dim, int n_head, int n_kv_head,
	int kv_stride, float scale) {
	attn_split<fc_u16>(Q, K, V, PHI, SCR, n_kv, head_dim, n_head, n_kv_head, kv_stride, scale);
}

FC_KERNEL void __launch_bounds__(ATTN_THREADS)
attn_combine_f16(const float* __restrict__ Q, const fc_u16* __restrict__ K, const fc_u16* __restrict__ V,
	float* __restrict__ PHI, float* __restrict__ SCR, float* __restrict__ O, int n_kv, int head_dim, int n_head,
	int n_kv_head, int kv_stride, float scale) {
	attn_combine<fc_u16>(Q, K, V, PHI, SCR, O, n_kv, head_dim, n_head, n_kv_head, kv_stride, scale);
}

FC_KERNEL void __launch_bounds__(ATTN_THREADS)
attn_prefill_f16(const float* __restrict__ Q, const fc_u16* __restrict__ K, const fc_u16* __restrict__ V,
	float* __restrict__ O, int n_tok, int n_past, int head_dim, int n_head, int n_kv_head, int kv_stride,
	float scale) {
	attn_prefill<fc_u16>(Q, K, V, O, n_tok, n_past, head_dim, n_head, n_kv_head, kv_stride, scale);
}

FC_KERNEL void __launch_bounds__(ATTN_THREADS)
attn_split_q8_0(const float* __restrict__ Q, const attn_q8_0* __restrict__ K, const attn_q8_0* __restrict__ V,
	const float* __restrict__ PHI, float* __restrict__ SCR, int n_kv, int head_dim, int n_head, int n_kv_head,
	int kv_stride, float scale) {
	attn_split<attn_q8_0>(Q, K, V, PHI, SCR, n_kv, head_dim, n_head, n_kv_head, kv_stride, scale);
}

FC_KERNEL void __launch_bounds__(ATTN_THREADS)
attn_combine_q8_0(const float* __restrict__ Q, const attn_q8_0* __restrict__ K, const attn_q8_0* __restrict__ V,
	float* __restrict__ PHI, float* __restrict__ SCR, float* __restrict__ O, int n_kv, int head_dim, int n_head,
	int n_kv_head, int kv_stride, float scale) {
	attn_combine<attn_q8_0>(Q, K, V, PHI, SCR, O, n_kv, head_dim, n_head, n_kv_head, kv_stride, scale);
}

FC_KERNEL void __launch_bounds__(ATTN_THREADS)
attn_prefill_q8_0(const float* __restrict__ Q, const attn_q8_0* __restrict__ K, const attn_q8_0* __restrict__ V,
	float* __restrict__ O, int n_tok, int n_past, int head_dim, int n_head, int n_kv_head, int kv_stride,
	float scale) {
	attn_prefill<attn_q8_0>(Q, K, V, O, n_tok, n_past, head_dim, n_head, n_kv_head, kv_stride, scale);
}
