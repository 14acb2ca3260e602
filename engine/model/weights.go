package model

import (
	"fmt"
	"unsafe"

	"flowchat/engine/ggml"
)

// Weight is a 1-D or 2-D tensor in its stored type. For a matrix, Cols is
// the length of a row (the input features of a linear map) and Rows the
// number of rows (output features).
type Weight struct {
	Name       string
	Type       ggml.Type
	Cols, Rows int
	Data       []byte // Rows × Type.RowSize(Cols) bytes, usually a slice of a mapped file
	// Rows4: Data holds the rows interleaved in groups of 4
	// (ggml.InterleaveRows4, Model.InterleaveRows4) for the decode kernels;
	// Row and Plain give the rows row-major.
	Rows4 bool
}

// Row returns the bytes of row r (a copy when the rows are interleaved).
func (w *Weight) Row(r int) []byte {
	rs := w.Type.RowSize(w.Cols)
	if w.Rows4 {
		return ggml.Rows4Row(w.Type, w.Cols, w.Data, w.Rows, r, make([]byte, rs))
	}
	return w.Data[r*rs : (r+1)*rs]
}

// Plain returns rows [r0, r1) row-major: a slice of Data, or a copy when
// the rows are interleaved.
func (w *Weight) Plain(r0, r1 int) []byte {
	rs := w.Type.RowSize(w.Cols)
	if !w.Rows4 {
		return w.Data[r0*rs : r1*rs]
	}
	out := make([]byte, (r1-r0)*rs)
	for r := r0; r < r1; r++ {
		ggml.Rows4Row(w.Type, w.Cols, w.Data, w.Rows, r, out[(r-r0)*rs:])
	}
	return out
}

// Floats dequantizes the whole tensor (norm gains, biases: small tensors).
func (w *Weight) Floats() []float32 {
	out := make([]float32, w.Cols*w.Rows)
	for r := 0; r < w.Rows; r++ {
		ggml.DequantizeRow(w.Type, w.Row(r), out[r*w.Cols:(r+1)*w.Cols])
	}
	return out
}

// Source provides tensors by canonical name (GGUF names: blk.0.attn_q.weight).
type Source interface {
	Weight(name string) (*Weight, bool)
}

// binder binds weights by name, checking shapes and collecting the first
// error: a model file is outside input, so a wrong shape is an error for
// the user, not a panic.
type binder struct {
	src Source
	err error
}

func (b *binder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf(format, args...)
	}
}

// matrix binds a required [rows, cols] tensor (cols = row length).
func (b *binder) matrix(name string, cols, rows int) *Weight {
	w, ok := b.src.Weight(name)
	if !ok {
		b.fail("model file lacks tensor %s", name)
		return nil
	}
	return b.check(w, cols, rows)
}

// optMatrix binds an optional tensor; nil when absent.
func (b *binder) optMatrix(name string, cols, rows int) *Weight {
	w, ok := b.src.Weight(name)
	if !ok {
		return nil
	}
	return b.check(w, cols, rows)
}

func (b *binder) check(w *Weight, cols, rows int) *Weight {
	if (cols >= 0 && w.Cols != cols) || (rows >= 0 && w.Rows != rows) {
		b.fail("tensor %s has shape [%d, %d], want [%d, %d]", w.Name, w.Cols, w.Rows, cols, rows)
		return nil
	}
	alignData(w)
	return w
}

// alignData copies tensor data that is not 4-byte aligned (the legacy
// PyTorch format packs storages at arbitrary offsets) so that every kernel
// may read it as float32/uint16 words.
func alignData(w *Weight) {
	if len(w.Data) > 0 && uintptr(unsafe.Pointer(&w.Data[0]))%4 != 0 {
		w.Data = append([]byte(nil), w.Data...)
	}
}

// vector binds an optional 1-D tensor of length n as float32; nil if absent.
func (b *binder) vector(name string, n int) []float32 {
	w := b.optMatrix(name, n, 1)
	if w == nil {
		return nil
	}
	return w.Floats()
}
