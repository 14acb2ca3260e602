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

// The K-quant kernels (Q4_K, Q5_K, Q6_K against Q8_K activations) keep the
// lanes of ggml's AVX2 vec_dot: per super-block, 8 int32 lanes each hold
// the exact sum over the sub-blocks of scale·Σ(4 consecutive products) —
// lane l takes elements 4l..4l+3 of every 32 — converted to float32 and
// accumulated with one fused multiply-add by d_w·d_x rounded to float32;
// the lanes are summed at the end as ggml's hsum_float_8. The mins of
// Q4_K go through 4 lanes (sub-blocks 2i and 2i+1 in lane i) by dmin·d_x,
// summed as (m0+m2)+(m1+m3) and subtracted; those of Q5_K through one
// scalar fused multiply-subtract per super-block, added at the end. The
// single-row, strip and tile kernels all run this chain, and these twins
// reproduce it bit for bit.

// kLanes runs that chain over the super-blocks of a row (bsize bytes each)
// decoded by decode, with sub-blocks of group elements; mins selects the
// mins term: 0 none (Q6_K), 4 Q4_K's lanes, 1 Q5_K's scalar.
func kLanes(n, bsize, group int, w, x []byte, decode func(b []byte) kblock, mins int) float32 {
	var acc [8]float32
	var macc [4]float32
	var m1 float32
	for b := 0; b < n/QK_K; b++ {
		k := decode(w[bsize*b : bsize*(b+1)])
		yd, ys, bsum := q8K(x[292*b : 292*(b+1)])
		var lane [8]int32
		for e := 0; e < QK_K; e++ {
			lane[e%32/4] += int32(k.sc[e/group] * k.lv[e] * int(int8(ys[e])))
		}
		s := float32(k.d * yd)
		for l := range acc {
			acc[l] = fma32(float32(lane[l]), s, acc[l])
		}
		if mins == 0 {
			continue
		}
		m := float32(k.dmin * yd)
		var ml [4]int32
		for i := range ml {
			ml[i] = int32(k.mn[2*i]*(bsum(4*i)+bsum(4*i+1)) + k.mn[2*i+1]*(bsum(4*i+2)+bsum(4*i+3)))
		}
		if mins == 4 {
			for i := range macc {
				macc[i] = fma32(float32(ml[i]), m, macc[i])
			}
		} else {
			m1 = fma32(-float32(ml[0]+ml[1]+ml[2]+ml[3]), m, m1)
		}
	}
	s := hsum8(acc)
	switch mins {
	case 4:
		s -= (macc[0] + macc[2]) + (macc[1] + macc[3])
	case 1:
		s += m1
	}
	return s
}

// dotQ4_KLanes, dotQ5_KLanes and dotQ6_KLanes are the lane twins of the
// K-quant kernels.
func dotQ4_KLanes(n int, w, x []byte) float32 { return kLanes(n, 144, 32, w, x, decodeQ4_K, 4) }
func dotQ5_KLanes(n int, w, x []byte) float32 { return kLanes(n, 176, 32, w, x, decodeQ5_K, 1) }
func dotQ6_KLanes(n int, w, x []byte) float32 { return kLanes(n, 210, 16, w, x, decodeQ6_K, 0) }

// dotQ3_KLanes is the lane twin of the Q3_K kernels (dotQ3_KAVX and its
// tile): the chain above without mins, levels −4..3 by 16-element scales.
func dotQ3_KLanes(n int, w, x []byte) float32 { return kLanes(n, 110, 16, w, x, decodeQ3_K, 0) }

// dotQ2_KLanes is the lane twin of the Q2_K kernels (dotQ2_KAVX, the
// tiles of gemmk2_amd64.s). Unlike the chain above, the mins share the 8
// float lanes: per super-block, lane l first takes a fused
// multiply-subtract of mn[2l]·bsum[2l] + mn[2l+1]·bsum[2l+1] by dmin·d_x
// (16-element sub-blocks, VPMADDWD's pairs), then the fused multiply-add
// of its sums by d·d_x.
func dotQ2_KLanes(n int, w, x []byte) float32 {
	var acc [8]float32
	for b := 0; b < n/QK_K; b++ {
		k := decodeQ2_K(w[84*b : 84*(b+1)])
		yd, ys, bsum := q8K(x[292*b : 292*(b+1)])
		m := float32(k.dmin * yd)
		for l := range acc {
			ml := k.mn[2*l]*bsum(2*l) + k.mn[2*l+1]*bsum(2*l+1)
			acc[l] = fma32(-float32(ml), m, acc[l])
		}
		var lane [8]int32
		for e := 0; e < QK_K; e++ {
			lane[e%32/4] += int32(k.sc[e/16] * k.lv[e] * int(int8(ys[e])))
		}
		s := float32(k.d * yd)
		for l := range acc {
			acc[l] = fma32(float32(lane[l]), s, acc[l])
		}
	}
	return hsum8(acc)
}
