package cuda

// MatMulMatvecMaxCols is the most columns MatMul runs through matmul.cu's
// matvec kernels; more go to matmul_tiled.cu's tiled kernels (see
// MatMulTiled).
const MatMulMatvecMaxCols = 16

// MatMulTiled reports whether MatMul over cols activation columns runs
// the tiled prefill kernels (true) or the matvec (false). Every backend's
// launcher and the twins (Twin.MatMul, the stand-in device) take this one
// rule, so a stand-in computes what the device would.
//
// Why 16: decode and batched decode (1–16 columns) are bound by reading
// the weights. The matvec streams each weight row once per MM_MAX_COLS (8)
// columns with every lane busy, so up to 16 columns it reads the weights
// at most twice. A tiled block spends a 64-column tile on them (at 16
// columns three quarters of its multiply-adds are padding) and has one
// block per 64 rows (64 blocks for a 4096-row matrix, fewer than an
// H100's 132 SMs), so it could not stream the weights at full bandwidth.
// From 17 columns the matvec reads every weight three times or more, the
// tiled kernel once per 64 columns, and a prompt's hundreds of columns
// give it enough blocks. The threshold is reasoned, not yet measured on a
// GPU (docs/PERFORMANCE.md).
func MatMulTiled(cols int) bool { return cols > MatMulMatvecMaxCols }

// matMulTiledLaunch is the tiled kernel's launch (matmul_tiled.cu).
func matMulTiledLaunch(t WeightType, w, x, y uint64, n, rows, cols int) Launch {
	l := Launch{Kernel: t.TiledKernel(), Grid: Dim3{X: ceilDiv(rows, mtRows), Y: ceilDiv(cols, mtCols)}, Block: Dim3{X: mtThreads}}
	l.ptrs(w, x, y).ints(n, rows, cols)
	return l
}
