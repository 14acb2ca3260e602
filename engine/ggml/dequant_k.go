package ggml

// K-quant block layouts (QK_K = 256 elements per super-block), byte offsets:
//
//	Q2_K (84):  scales[16] (lo 4 bits scale, hi 4 bits min) | qs[64] | d | dmin
//	Q3_K (110): hmask[32] | qs[64] | scales[12] (6-bit, packed) | d
//	Q4_K (144): d | dmin | scales[12] (6-bit scales+mins) | qs[128]
//	Q5_K (176): d | dmin | scales[12] | qh[32] | qs[128]
//	Q6_K (210): ql[128] | qh[64] | scales[16] (int8) | d
//	Q8_K (292): d (float32) | qs[256] (int8) | bsums[16] (int16, sums of 16)

func dequantQ2_K(b []byte, y []float32) {
	sc, q := b[0:16], b[16:80]
	d, dmin := f16(b[80:]), f16(b[82:])
	is := 0
	for n := 0; n < QK_K; n += 128 {
		for shift := uint(0); shift < 8; shift += 2 {
			for half := 0; half < 2; half++ {
				s := sc[is]
				is++
				dl, ml := d*float32(s&0xf), dmin*float32(s>>4)
				for l := 0; l < 16; l++ {
					y[l] = float32(dl*float32((q[l+16*half]>>shift)&3)) - ml
				}
				y = y[16:]
			}
		}
		q = q[32:]
	}
}

// q3Scales unpacks the sixteen 6-bit Q3_K scales (still offset by 32).
func q3Scales(p []byte) [16]int8 {
	a0, a1, tmp := le32(p), le32(p[4:]), le32(p[8:])
	const m1, m2 = 0x03030303, 0x0f0f0f0f
	aux := [4]uint32{
		a0&m2 | (tmp>>0&m1)<<4,
		a1&m2 | (tmp>>2&m1)<<4,
		(a0>>4)&m2 | (tmp>>4&m1)<<4,
		(a1>>4)&m2 | (tmp>>6&m1)<<4,
	}
	var s [16]int8
	for i := range s {
		s[i] = int8(aux[i/4] >> (8 * uint(i%4)))
	}
	return s
}

func dequantQ3_K(b []byte, y []float32) {
	hm, q := b[0:32], b[32:96]
	sc := q3Scales(b[96:108])
	d := f16(b[108:])
	is := 0
	m := byte(1)
	for n := 0; n < QK_K; n += 128 {
		for shift := uint(0); shift < 8; shift += 2 {
			for half := 0; half < 32; half += 16 {
				dl := d * float32(int(sc[is])-32)
				is++
				for l := half; l < half+16; l++ {
					v := int((q[l] >> shift) & 3)
					if hm[l]&m == 0 {
						v -= 4
					}
					y[l-half] = dl * float32(v)
				}
				y = y[16:]
			}
			m <<= 1
		}
		q = q[32:]
	}
}

// scaleMinK4 unpacks the j-th 6-bit scale and min of Q4_K/Q5_K
// (get_scale_min_k4).
func scaleMinK4(j int, q []byte) (sc, m byte) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xf | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

func dequantQ4_K(b []byte, y []float32) {
	d, dmin := f16(b), f16(b[2:])
	scales, q := b[4:16], b[16:144]
	for j := 0; j < 4; j++ {
		s1, m1 := scaleMinK4(2*j, scales)
		s2, m2 := scaleMinK4(2*j+1, scales)
		d1, mm1 := d*float32(s1), dmin*float32(m1)
		d2, mm2 := d*float32(s2), dmin*float32(m2)
		for l := 0; l < 32; l++ {
			y[l] = float32(d1*float32(q[l]&0xf)) - mm1
			y[l+32] = float32(d2*float32(q[l]>>4)) - mm2
		}
		y, q = y[64:], q[32:]
	}
}

func dequantQ5_K(b []byte, y []float32) {
	d, dmin := f16(b), f16(b[2:])
	scales, qh, ql := b[4:16], b[16:48], b[48:176]
	u1, u2 := byte(1), byte(2)
	for j := 0; j < 4; j++ {
		s1, m1 := scaleMinK4(2*j, scales)
		s2, m2 := scaleMinK4(2*j+1, scales)
		d1, mm1 := d*float32(s1), dmin*float32(m1)
		d2, mm2 := d*float32(s2), dmin*float32(m2)
		for l := 0; l < 32; l++ {
			v1, v2 := ql[l]&0xf, ql[l]>>4
			if qh[l]&u1 != 0 {
				v1 += 16
			}
			if qh[l]&u2 != 0 {
				v2 += 16
			}
			y[l] = float32(d1*float32(v1)) - mm1
			y[l+32] = float32(d2*float32(v2)) - mm2
		}
		y, ql = y[64:], ql[32:]
		u1, u2 = u1<<2, u2<<2
	}
}

func dequantQ6_K(b []byte, y []float32) {
	ql, qh, sc := b[0:128], b[128:192], b[192:208]
	d := f16(b[208:])
	for n := 0; n < 2; n++ {
		for l := 0; l < 32; l++ {
			is := l / 16
			q1 := int(ql[l]&0xf|(qh[l]&3)<<4) - 32
			q2 := int(ql[l+32]&0xf|(qh[l]>>2&3)<<4) - 32
			q3 := int(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
			q4 := int(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32
			y[l] = float32(d*float32(int8(sc[is]))) * float32(q1)
			y[l+32] = float32(d*float32(int8(sc[is+2]))) * float32(q2)
			y[l+64] = float32(d*float32(int8(sc[is+4]))) * float32(q3)
			y[l+96] = float32(d*float32(int8(sc[is+6]))) * float32(q4)
		}
		y, ql, qh, sc = y[128:], ql[64:], qh[32:], sc[8:]
	}
}
