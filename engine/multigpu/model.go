package multigpu

import "math"

// Layer is the shape of one transformer layer, for placement. Memory is
// counted at BytesPerWeight per matrix element (4 for F32, 2 for F16,
// 34/32 for Q8_0, 18/32 for Q4_0).
type Layer struct {
	DModel, NHead, NKVHead, HeadDim, DFF int
	BytesPerWeight                       float64
	// KVBytesPerHead is the KV cache one KV head needs over the context
	// (2 · n_ctx · HeadDim · element size); it travels with its head.
	KVBytesPerHead int64
	// FFNGranule is the number of FFN columns in one unit of the tensor
	// split (0 means 32, a quantization block). Splits fall on unit
	// boundaries; the last unit may be shorter.
	FFNGranule int
}

// Model is what Plan places: the layers in order, the token embedding (on
// the first device of the first group) and the output norm and head (on
// the first device of the last group).
type Model struct {
	Layers        []Layer
	Embed, Output int64
}

func (l Layer) granule() int {
	if l.FFNGranule <= 0 {
		return 32
	}
	return l.FFNGranule
}

// group is the number of query heads per KV head.
func (l Layer) group() int { return l.NHead / max(l.NKVHead, 1) }

// headUnits and ffnUnits are what the tensor split apportions.
func (l Layer) headUnits() int { return l.NKVHead }
func (l Layer) ffnUnits() int  { return (l.DFF + l.granule() - 1) / l.granule() }

func (l Layer) weightBytes(elems int) int64 {
	return int64(math.Ceil(float64(elems) * l.BytesPerWeight))
}

// headBytes is one KV head with its query heads: g Q rows-blocks, one K and
// one V block (HeadDim × DModel each), the g matching O column blocks, and
// the head's KV cache.
func (l Layer) headBytes() int64 {
	return l.weightBytes((2*l.group()+2)*l.HeadDim*l.DModel) + l.KVBytesPerHead
}

// colsBytes is FFN columns [c0, c1): gate and up rows and down columns.
func (l Layer) colsBytes(c0, c1 int) int64 { return l.weightBytes(3 * (c1 - c0) * l.DModel) }

// fixedBytes is what every device of a group holds whole: the two RMSNorm
// weight vectors, in F32.
func (l Layer) fixedBytes() int64 { return int64(2 * l.DModel * 4) }

// Bytes is the layer's whole footprint on one device.
func (l Layer) Bytes() int64 {
	return l.fixedBytes() + int64(l.headUnits())*l.headBytes() + l.colsBytes(0, l.DFF)
}

// cols converts an FFN unit range to a column range.
func (l Layer) cols(u0, u1 int) (int, int) {
	g := l.granule()
	return min(u0*g, l.DFF), min(u1*g, l.DFF)
}
