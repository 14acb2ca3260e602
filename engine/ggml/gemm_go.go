package ggml

// The plain-Go twins of the matrix kernels (gemm_amd64.s): the same chain
// per (row, column) pair, so that they agree bit for bit. Per block, 8
// lanes each hold the exact integer sum of 4 consecutive products; the
// block scale d_w·d_x is rounded to float32 and each lane accumulates
// float32(lane sum)·scale with one fused multiply-add; the lanes are summed
// at the end as ggml's hsum_float_8. This is the order of ggml's AVX2
// ggml_vec_dot_q4_0_q8_0 / q8_0_q8_0 (mul_sum_i8_pairs_float + fmadd).

// lanesQ32 runs that chain over the nb blocks of a row; level(b, j) is the
// signed integer value of element j of weight block b, and wd(b) and xd(b)
// the float32 scales.
func lanesQ32(nb int, x []byte, level func(b, j int) int, wd func(b int) float32) float32 {
	var acc [8]float32
	for b := 0; b < nb; b++ {
		xb := x[34*b : 34*b+34]
		s := float32(wd(b) * f16(xb))
		for l := 0; l < 8; l++ {
			sum := 0
			for j := 4 * l; j < 4*l+4; j++ {
				sum += level(b, j) * int(int8(xb[2+j]))
			}
			acc[l] = fma32(float32(sum), s, acc[l])
		}
	}
	return hsum8(acc)
}

// dotQ4_0Lanes is the lane twin of the Q4_0 kernels.
func dotQ4_0Lanes(n int, w, x []byte) float32 {
	return lanesQ32(n/32, x, func(b, j int) int {
		q := w[18*b+2+j%16]
		if j >= 16 {
			q >>= 4
		}
		return int(q&0xf) - 8
	}, func(b int) float32 { return f16(w[18*b:]) })
}

// dotQ8_0Lanes is the lane twin of the Q8_0 kernels.
func dotQ8_0Lanes(n int, w, x []byte) float32 {
	return lanesQ32(n/32, x, func(b, j int) int { return int(int8(w[34*b+2+j])) },
		func(b int) float32 { return f16(w[34*b:]) })
}
