package ggml

// Tiled attention kernels for prompt processing: a block of query rows of
// one head against the same keys and values. Every score and every output
// element is computed exactly as the per-row kernels compute it (DotsF32,
// AccumulateRows), so the tiled path is bit for bit the per-token one; the
// tiles only share loads (a key chunk used by two queries, a value row by
// two output rows) and reduce eight dot products at once.

// DotsTileF32 sets out[r·ostride+j] to DotsF32's score of query row
// q[r·qstride : r·qstride+n] against key row k[j·kstride : j·kstride+n],
// for r < rows and j < m.
func DotsTileF32(q []float32, qstride, rows int, k []float32, kstride, m, n int, out []float32, ostride int) {
	if rows <= 0 || m <= 0 {
		return
	}
	if len(q) < (rows-1)*qstride+n || len(k) < (m-1)*kstride+n || len(out) < (rows-1)*ostride+m {
		panic("ggml: DotsTileF32 operands too short")
	}
	dotsTile(q, qstride, rows, k, kstride, m, n, out, ostride)
}

var dotsTile = dotsTileGo

// dotsTileGo is the meaning: one DotsF32 per row.
func dotsTileGo(q []float32, qstride, rows int, k []float32, kstride, m, n int, out []float32, ostride int) {
	for r := 0; r < rows; r++ {
		dotsF32Go(q[r*qstride:r*qstride+n], k, kstride, out[r*ostride:r*ostride+m])
	}
}

// AccumulateTileF32 adds, for every row r < rows, Σ_j w[r·wstride+j]·
// v[j·vstride : j·vstride+n] (j < m) to out[r·ostride : r·ostride+n],
// each row exactly as AccumulateRows does.
func AccumulateTileF32(out []float32, ostride int, w []float32, wstride, rows int, v []float32, vstride, m, n int) {
	if rows <= 0 || m <= 0 || n <= 0 {
		return
	}
	if len(out) < (rows-1)*ostride+n || len(w) < (rows-1)*wstride+m || len(v) < (m-1)*vstride+n {
		panic("ggml: AccumulateTileF32 operands too short")
	}
	accTile(out, ostride, w, wstride, rows, v, vstride, m, n)
}

var accTile = accTileGo

// accTileGo is the meaning: one AccumulateRows per row.
func accTileGo(out []float32, ostride int, w []float32, wstride, rows int, v []float32, vstride, m, n int) {
	for r := 0; r < rows; r++ {
		accumulateRowsGo(out[r*ostride:r*ostride+n], w[r*wstride:r*wstride+m], v, vstride)
	}
}
