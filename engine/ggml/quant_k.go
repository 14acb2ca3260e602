package ggml

import "math"

// groupMaxEps is ggml's GROUP_MAX_EPS: groups below it quantize to zero.
const groupMaxEps = 1e-15

// Products that C accumulates are written float32(a*b) so that Go never
// fuses them into an FMA: the reference evaluates every operation in
// float32 with one rounding each.

// makeQXQuants is make_qx_quants with rmse_type 1 and no importance
// weights (w = x²): L gets values in [0, 2*nmax), the scale is returned.
func makeQXQuants(nmax int, x []float32, L []int8) float32 {
	maxv, amax := absMaxSigned(x)
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	fn := float32(nmax)
	iscale := float32(-nmax) / maxv
	sumlx, suml2 := qxSums(nmax, x, iscale, L)
	scale := float32(0)
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(fn + float32(0.1*float32(is))) / maxv
		slx, sl2 := qxSums(nmax, x, iscale, nil)
		if sl2 > 0 && float32(slx*slx) > float32(best*sl2) {
			qxSums(nmax, x, iscale, L)
			scale = slx / sl2
			best = scale * slx
		}
	}
	return scale
}

// qxSums rounds x*iscale into [-nmax, nmax-1] (stored +nmax into L when L
// is not nil) and returns the x²-weighted sums Σw·x·l and Σw·l².
func qxSums(nmax int, x []float32, iscale float32, L []int8) (sumlx, suml2 float32) {
	for i, v := range x {
		l := max(-nmax, min(nmax-1, nearestInt(iscale*v)))
		if L != nil {
			L[i] = int8(l + nmax)
		}
		w := v * v
		fl := float32(l)
		sumlx += float32(float32(w*v) * fl)
		suml2 += float32(float32(w*fl) * fl)
	}
	return sumlx, suml2
}

// makeQ3Quants is make_q3_quants(n, nmax, x, L, do_rmse=true).
func makeQ3Quants(nmax int, x []float32, L []int8) float32 {
	maxv, amax := absMaxSigned(x)
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	iscale := float32(-nmax) / maxv
	var sumlx, suml2 float32
	for i, v := range x {
		l := max(-nmax, min(nmax-1, nearestInt(iscale*v)))
		L[i] = int8(l)
		w := v * v
		sumlx += float32(float32(w*v) * float32(l))
		suml2 += float32(float32(w*float32(l)) * float32(l))
	}
	for itry := 0; itry < 5; itry++ {
		changed := 0
		for i, v := range x {
			w := v * v
			li := float32(L[i])
			slx := sumlx - float32(float32(w*v)*li)
			if slx <= 0 {
				continue
			}
			sl2 := suml2 - float32(float32(w*li)*li)
			nl := max(-nmax, min(nmax-1, nearestInt(float32(v*sl2)/slx)))
			if nl == int(L[i]) {
				continue
			}
			fl := float32(nl)
			slx += float32(float32(w*v) * fl)
			sl2 += float32(float32(w*fl) * fl)
			if sl2 > 0 && float32(float32(slx*slx)*suml2) > float32(float32(sumlx*sumlx)*sl2) {
				L[i], sumlx, suml2 = int8(nl), slx, sl2
				changed++
			}
		}
		if changed == 0 {
			break
		}
	}
	for i := range L {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// qkx2Params are the search parameters of make_qkx2_quants.
type qkx2Params struct {
	nmax         int
	rmin, rdelta float32
	nstep        int
	useMAD       bool
}

// makeQKX2Quants is make_qkx2_quants: an asymmetric (scale, min) fit of x
// into [0, nmax] minimising the weighted error. It returns the scale and
// the positive min (the_min = -min).
func makeQKX2Quants(p qkx2Params, x, weights []float32, L, Laux []uint8) (scale, theMin float32) {
	lo, hi := x[0], x[0]
	sumW := weights[0]
	sumX := sumW * x[0]
	for i := 1; i < len(x); i++ {
		lo, hi = min(lo, x[i]), max(hi, x[i])
		sumW += weights[i]
		sumX += float32(weights[i] * x[i])
	}
	lo = min(lo, 0)
	if hi == lo {
		clear(L)
		return 0, -lo
	}
	fn := float32(p.nmax)
	iscale := fn / (hi - lo)
	scale = 1 / iscale
	bestErr := qkx2Assign(p, x, weights, iscale, lo, scale, L)
	for is := 0; is <= p.nstep; is++ {
		iscale = (float32(p.rmin+float32(p.rdelta*float32(is))) + fn) / (hi - lo)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			l := max(0, min(p.nmax, nearestInt(float32(iscale*(v-lo)))))
			Laux[i] = uint8(l)
			w, fl := weights[i], float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(float32(w*fl) * fl)
			sumXL += float32(float32(w*fl) * v)
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D <= 0 {
			continue
		}
		thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
		thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
		if thisMin > 0 {
			thisMin = 0
			thisScale = sumXL / sumL2
		}
		if e := qkx2Error(p, x, weights, Laux, thisScale, thisMin); e < bestErr {
			copy(L, Laux[:len(x)])
			bestErr, scale, lo = e, thisScale, thisMin
		}
	}
	return scale, -lo
}

// qkx2Assign makes the initial assignment of make_qkx2_quants and returns
// its weighted error.
func qkx2Assign(p qkx2Params, x, weights []float32, iscale, lo, scale float32, L []uint8) float32 {
	for i, v := range x {
		L[i] = uint8(max(0, min(p.nmax, nearestInt(float32(iscale*(v-lo))))))
	}
	return qkx2Error(p, x, weights, L, scale, lo)
}

func qkx2Error(p qkx2Params, x, weights []float32, L []uint8, scale, lo float32) float32 {
	var e float32
	for i, v := range x {
		diff := float32(float32(scale*float32(L[i]))+lo) - v
		if p.useMAD {
			diff = abs32(diff)
		} else {
			diff = diff * diff
		}
		e += float32(weights[i] * diff)
	}
	return e
}

func sqrt32(v float32) float32 { return float32(math.Sqrt(float64(v))) }

func quantRefQ2_K(x []float32, b []byte) {
	var L [QK_K]uint8
	var Laux [16]uint8
	var weights [16]float32
	var scales, mins [16]float32
	p := qkx2Params{nmax: 3, rmin: -0.5, rdelta: 0.1, nstep: 15, useMAD: true}
	var maxScale, maxMin float32
	for j := 0; j < 16; j++ {
		xs := x[16*j : 16*j+16]
		for l, v := range xs {
			weights[l] = abs32(v)
		}
		scales[j], mins[j] = makeQKX2Quants(p, xs, weights[:], L[16*j:16*j+16], Laux[:])
		maxScale, maxMin = max(maxScale, scales[j]), max(maxMin, mins[j])
	}
	sc := b[0:16]
	clear(sc)
	put16(b[80:], 0)
	put16(b[82:], 0)
	if maxScale > 0 {
		iscale := 15 / maxScale
		for j := range sc {
			sc[j] = byte(nearestInt(iscale * scales[j]))
		}
		put16(b[80:], FP32ToFP16(maxScale/15))
	}
	if maxMin > 0 {
		iscale := 15 / maxMin
		for j := range sc {
			sc[j] |= byte(nearestInt(iscale*mins[j]) << 4)
		}
		put16(b[82:], FP32ToFP16(maxMin/15))
	}
	d, dmin := f16(b[80:]), f16(b[82:])
	for j := 0; j < 16; j++ {
		dl := d * float32(sc[j]&0xf)
		if dl == 0 {
			continue
		}
		dm := dmin * float32(sc[j]>>4)
		for i := 16 * j; i < 16*j+16; i++ {
			L[i] = uint8(max(0, min(3, nearestInt((x[i]+dm)/dl))))
		}
	}
	packQ2(L[:], b[16:80])
}

// packQ2 stores 2-bit values: byte l of each 32-byte group holds elements
// l, l+32, l+64, l+96 of its 128.
func packQ2(L []uint8, qs []byte) {
	for j := 0; j < QK_K; j += 128 {
		for l := 0; l < 32; l++ {
			qs[j/4+l] = L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6
		}
	}
}

func quantRefQ3_K(x []float32, b []byte) {
	var L [QK_K]int8
	var scales [16]float32
	var maxScale, amax float32
	for j := 0; j < 16; j++ {
		scales[j] = makeQ3Quants(4, x[16*j:16*j+16], L[16*j:16*j+16])
		if a := abs32(scales[j]); a > amax {
			amax, maxScale = a, scales[j]
		}
	}
	sc := b[96:108]
	clear(sc)
	put16(b[108:], 0)
	if maxScale != 0 {
		iscale := -32 / maxScale
		for j := 0; j < 16; j++ {
			l := int8(nearestInt(iscale * scales[j]))
			l = max(-32, min(31, l)) + 32
			if j < 8 {
				sc[j] = byte(l) & 0xf
			} else {
				sc[j-8] |= (byte(l) & 0xf) << 4
			}
			sc[j%4+8] |= byte(l>>4) << (2 * uint(j/4))
		}
		put16(b[108:], FP32ToFP16(1/iscale))
	}
	d := f16(b[108:])
	s := q3Scales(sc)
	for j := 0; j < 16; j++ {
		dl := d * float32(int(s[j])-32)
		if dl == 0 {
			continue
		}
		for i := 16 * j; i < 16*j+16; i++ {
			L[i] = int8(max(-4, min(3, nearestInt(x[i]/dl))) + 4)
		}
	}
	packQ3(L[:], b)
}

// packQ3 splits 3-bit values into the high-bit mask (element j: byte j%32,
// bit j/32) and 2-bit planes packed like Q2_K.
func packQ3(L []int8, b []byte) {
	hm := b[0:32]
	clear(hm)
	var lo [QK_K]uint8
	for j, l := range L {
		if l > 3 {
			hm[j%32] |= 1 << uint(j/32)
			l -= 4
		}
		lo[j] = uint8(l)
	}
	packQ2(lo[:], b[32:96])
}

// quantK4Scales fits each 32-element sub-block with make_qkx2_quants and
// packs the 6-bit scales and mins of Q4_K/Q5_K into b[4:16], d and dmin
// into b[0:4]. L receives the first-pass levels (overwritten later).
func quantK4Scales(p qkx2Params, x []float32, b []byte, L []uint8) {
	var Laux [32]uint8
	var weights [32]float32
	var scales, mins [8]float32
	var maxScale, maxMin float32
	for j := 0; j < 8; j++ {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := sqrt32(sumX2 / 32)
		for l, v := range xs {
			weights[l] = avX + abs32(v)
		}
		scales[j], mins[j] = makeQKX2Quants(p, xs, weights[:], L[32*j:32*j+32], Laux[:])
		maxScale, maxMin = max(maxScale, scales[j]), max(maxMin, mins[j])
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	sc := b[4:16]
	clear(sc)
	for j := 0; j < 8; j++ {
		ls := min(63, uint8(nearestInt(invScale*scales[j])))
		lm := min(63, uint8(nearestInt(invMin*mins[j])))
		if j < 4 {
			sc[j], sc[j+4] = ls, lm
		} else {
			sc[j+4] = ls&0xf | (lm&0xf)<<4
			sc[j-4] |= (ls >> 4) << 6
			sc[j] |= (lm >> 4) << 6
		}
	}
	put16(b, FP32ToFP16(maxScale/63))
	put16(b[2:], FP32ToFP16(maxMin/63))
}

// requantK4 recomputes the levels of Q4_K/Q5_K against the stored scales.
func requantK4(nmax int, x []float32, b []byte, L []uint8) {
	d, dmin := f16(b), f16(b[2:])
	for j := 0; j < 8; j++ {
		s, m := scaleMinK4(j, b[4:16])
		dl := d * float32(s)
		if dl == 0 {
			continue
		}
		dm := dmin * float32(m)
		for i := 32 * j; i < 32*j+32; i++ {
			L[i] = uint8(max(0, min(nmax, nearestInt((x[i]+dm)/dl))))
		}
	}
}

func quantRefQ4_K(x []float32, b []byte) {
	var L [QK_K]uint8
	quantK4Scales(qkx2Params{nmax: 15, rmin: -1, rdelta: 0.1, nstep: 20}, x, b, L[:])
	requantK4(15, x, b, L[:])
	q := b[16:144]
	for j := 0; j < QK_K; j += 64 {
		for l := 0; l < 32; l++ {
			q[j/2+l] = L[j+l] | L[j+l+32]<<4
		}
	}
}

func quantRefQ5_K(x []float32, b []byte) {
	var L [QK_K]uint8
	quantK4Scales(qkx2Params{nmax: 31, rmin: -0.5, rdelta: 0.1, nstep: 15}, x, b, L[:])
	requantK4(31, x, b, L[:])
	qh, ql := b[16:48], b[48:176]
	clear(qh)
	m1, m2 := byte(1), byte(2)
	for n := 0; n < QK_K; n += 64 {
		for j := 0; j < 32; j++ {
			l1, l2 := L[n+j], L[n+j+32]
			if l1 > 15 {
				l1 -= 16
				qh[j] |= m1
			}
			if l2 > 15 {
				l2 -= 16
				qh[j] |= m2
			}
			ql[n/2+j] = l1 | l2<<4
		}
		m1, m2 = m1<<2, m2<<2
	}
}

func quantRefQ6_K(x []float32, b []byte) {
	var L [QK_K]int8
	var scales [16]float32
	var maxScale, maxAbs float32
	for ib := 0; ib < 16; ib++ {
		scales[ib] = makeQXQuants(32, x[16*ib:16*ib+16], L[16*ib:16*ib+16])
		if a := abs32(scales[ib]); a > maxAbs {
			maxAbs, maxScale = a, scales[ib]
		}
	}
	if maxAbs < groupMaxEps {
		clear(b)
		return
	}
	iscale := -128 / maxScale
	put16(b[208:], FP32ToFP16(1/iscale))
	sc := b[192:208]
	for ib := range sc {
		sc[ib] = byte(int8(min(127, nearestInt(iscale*scales[ib]))))
	}
	d := f16(b[208:])
	for j := 0; j < 16; j++ {
		dl := d * float32(int8(sc[j]))
		if dl == 0 {
			continue
		}
		for i := 16 * j; i < 16*j+16; i++ {
			L[i] = int8(max(-32, min(31, nearestInt(x[i]/dl))) + 32)
		}
	}
	packQ6(L[:], b)
}

func packQ6(L []int8, b []byte) {
	ql, qh := b[0:128], b[128:192]
	for j := 0; j < QK_K; j += 128 {
		for l := 0; l < 32; l++ {
			q1, q2 := uint8(L[j+l]), uint8(L[j+l+32])
			q3, q4 := uint8(L[j+l+64]), uint8(L[j+l+96])
			ql[j/2+l] = q1&0xf | (q3&0xf)<<4
			ql[j/2+l+32] = q2&0xf | (q4&0xf)<<4
			qh[j/4+l] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
		}
	}
}

// bestIndexInt8 returns the index of the codebook value nearest to x
// (best_index_int8; ties go up).
func bestIndexInt8(val []int8, x float32) int {
	n := len(val)
	if x <= float32(val[0]) {
		return 0
	}
	if x >= float32(val[n-1]) {
		return n - 1
	}
	ml, mu := 0, n-1
	for mu-ml > 1 {
		mav := (ml + mu) / 2
		if x < float32(val[mav]) {
			mu = mav
		} else {
			ml = mav
		}
	}
	if x-float32(val[mu-1]) < float32(val[mu])-x {
		return mu - 1
	}
	return mu
}

// quantRefIQ4_NL is quantize_iq4_nl without imatrix (weights x², ntry 7).
func quantRefIQ4_NL(x []float32, b []byte) {
	vals := kvaluesIQ4NL[:]
	maxv, amax := absMaxSigned(x)
	var d float32
	if amax >= groupMaxEps {
		d = iq4Scale(x, maxv, vals)
	}
	put16(b, FP32ToFP16(d))
	id := inv(d)
	qs := b[2:18]
	for j := 0; j < 16; j++ {
		qs[j] = byte(bestIndexInt8(vals, id*x[j])) | byte(bestIndexInt8(vals, id*x[j+16]))<<4
	}
}

// iq4Scale searches the block scale of IQ4_NL (quantize_row_iq4_nl_impl).
func iq4Scale(x []float32, maxv float32, vals []int8) float32 {
	id := 1 / (-maxv / float32(vals[0]))
	sumqx, sumq2 := iq4Sums(x, id, vals)
	var d float32
	if sumq2 > 0 {
		d = sumqx / sumq2
	}
	best := d * sumqx
	for itry := -7; itry <= 7; itry++ {
		id = float32(itry+int(vals[0])) / maxv
		sqx, sq2 := iq4Sums(x, id, vals)
		if sq2 > 0 && float32(sqx*sqx) > float32(best*sq2) {
			d = sqx / sq2
			best = d * sqx
		}
	}
	return d
}

func iq4Sums(x []float32, id float32, vals []int8) (sumqx, sumq2 float32) {
	for _, v := range x {
		q := float32(vals[bestIndexInt8(vals, id*v)])
		w := v * v
		sumqx += float32(float32(w*q) * v)
		sumq2 += float32(float32(w*q) * q)
	}
	return sumqx, sumq2
}
