package hub

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// MaxHeaderBytes bounds the GGUF header (metadata + tensor directory) this
// package will read: the largest real vocabularies (262k tokens with
// scores, types and merges) take ~20 MiB.
const MaxHeaderBytes = 256 << 20

// ErrShortHeader is wrapped by *ShortError: the prefix ends inside the
// header.
var ErrShortHeader = errors.New("gguf header continues past the bytes read")

// ErrBadHeader is wrapped by every error about a malformed header.
var ErrBadHeader = errors.New("malformed gguf header")

// ShortError says how long a prefix must be, at least, to get further.
type ShortError struct{ Need int64 }

func (e *ShortError) Error() string {
	return fmt.Sprintf("%v: need at least %d bytes", ErrShortHeader, e.Need)
}

func (e *ShortError) Unwrap() error { return ErrShortHeader }

// TensorEntry is one tensor of the directory. Shape is in GGML order
// (Shape[0] is the row length).
type TensorEntry struct {
	Name   string
	Shape  []uint64
	Type   uint32 // ggml_type id
	Offset uint64 // from the start of the data section
	Size   uint64 // bytes; 0 when the type is unknown to this package
}

// Elements is the product of the shape.
func (t *TensorEntry) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Header is the part of a GGUF file before the tensor data: metadata and
// the tensor directory. Values are normalized: integers to int64 (uint64
// above MaxInt64 stays uint64), floats to float64; arrays of numbers of at
// most maxKeptArray elements to []int64 / []float64; longer arrays and
// arrays of strings are skipped and only their length is kept.
type Header struct {
	Version    uint32
	KV         map[string]any
	ArrayLen   map[string]uint64 // element count of every array value
	Tensors    []TensorEntry
	Alignment  uint64
	DataOffset uint64 // file offset of the tensor data: the header's size
}

const maxKeptArray = 4096

// ParseHeader walks the GGUF header in prefix, the first bytes of a file.
// When prefix ends inside the header it returns a *ShortError saying how
// many bytes are needed to get further; call again with a longer prefix.
func ParseHeader(prefix []byte) (*Header, error) {
	w := &walker{b: prefix}
	h := &Header{KV: map[string]any{}, ArrayLen: map[string]uint64{}}
	w.header(h)
	if w.err != nil {
		return nil, w.err
	}
	return h, nil
}

type walker struct {
	b   []byte
	off uint64
	err error
}

func (w *walker) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf("%w: at byte %d: %s", ErrBadHeader, w.off, fmt.Sprintf(format, args...))
	}
}

// take returns the next n bytes, or nil after recording why not.
func (w *walker) take(n uint64) []byte {
	if w.err != nil {
		return nil
	}
	if n > MaxHeaderBytes || w.off+n > MaxHeaderBytes {
		w.fail("%d bytes at offset %d go past the %d-byte header limit", n, w.off, MaxHeaderBytes)
		return nil
	}
	if w.off+n > uint64(len(w.b)) {
		w.err = &ShortError{Need: int64(w.off + n)}
		return nil
	}
	s := w.b[w.off : w.off+n]
	w.off += n
	return s
}

func (w *walker) u32() uint32 {
	if b := w.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (w *walker) u64() uint64 {
	if b := w.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (w *walker) str() string { return string(w.take(w.u64())) }

const ggufMagic = 0x46554747 // "GGUF" little-endian

func (w *walker) header(h *Header) {
	if magic := w.u32(); w.err == nil && magic != ggufMagic {
		w.fail("not a GGUF file (magic %#x)", magic)
	}
	h.Version = w.u32()
	if w.err == nil && (h.Version < 2 || h.Version > 3) {
		w.fail("unsupported GGUF version %d", h.Version)
	}
	nTensors, nKV := w.u64(), w.u64()
	// A key takes ≥ 12 bytes and a tensor entry ≥ 24: bigger counts cannot
	// fit the header limit.
	if w.err == nil && (nKV > MaxHeaderBytes/12 || nTensors > MaxHeaderBytes/24) {
		w.fail("absurd counts: %d tensors, %d keys", nTensors, nKV)
	}
	for i := uint64(0); i < nKV && w.err == nil; i++ {
		w.kv(h)
	}
	h.Tensors = make([]TensorEntry, 0, min(nTensors, 4096))
	for i := uint64(0); i < nTensors && w.err == nil; i++ {
		h.Tensors = append(h.Tensors, w.tensor())
	}
	if w.err == nil {
		w.place(h)
	}
}

func (w *walker) kv(h *Header) {
	key := w.str()
	t := w.u32()
	if t == gtArray {
		et, n := w.u32(), w.u64()
		h.ArrayLen[key] = n
		if v := w.array(et, n); v != nil {
			h.KV[key] = v
		}
	} else if v := w.scalar(t); w.err == nil {
		h.KV[key] = v
	}
	if w.err != nil && !errors.Is(w.err, ErrShortHeader) {
		w.err = fmt.Errorf("key %q: %w", key, w.err)
	}
}

// GGUF value type tags.
const (
	gtU8 = iota
	gtI8
	gtU16
	gtI16
	gtU32
	gtI32
	gtF32
	gtBool
	gtString
	gtArray
	gtU64
	gtI64
	gtF64
)

// scalarSize is the encoded size of a fixed-size value type (0 for string,
// array and unknown types).
func scalarSize(t uint32) uint64 {
	switch t {
	case gtU8, gtI8, gtBool:
		return 1
	case gtU16, gtI16:
		return 2
	case gtU32, gtI32, gtF32:
		return 4
	case gtU64, gtI64, gtF64:
		return 8
	}
	return 0
}

func (w *walker) scalar(t uint32) any {
	if t == gtString {
		return w.str()
	}
	n := scalarSize(t)
	if n == 0 {
		w.fail("unknown value type %d", t)
		return nil
	}
	b := w.take(n)
	if b == nil {
		return nil
	}
	return decodeScalar(t, b)
}

func decodeScalar(t uint32, b []byte) any {
	switch t {
	case gtU8:
		return int64(b[0])
	case gtI8:
		return int64(int8(b[0]))
	case gtBool:
		return b[0] != 0
	case gtU16:
		return int64(binary.LittleEndian.Uint16(b))
	case gtI16:
		return int64(int16(binary.LittleEndian.Uint16(b)))
	case gtU32:
		return int64(binary.LittleEndian.Uint32(b))
	case gtI32:
		return int64(int32(binary.LittleEndian.Uint32(b)))
	case gtF32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case gtU64:
		if u := binary.LittleEndian.Uint64(b); u > math.MaxInt64 {
			return u
		}
		return int64(binary.LittleEndian.Uint64(b))
	case gtI64:
		return int64(binary.LittleEndian.Uint64(b))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

// array reads (or skips) n elements of type et; it keeps short numeric
// arrays.
func (w *walker) array(et uint32, n uint64) any {
	switch {
	case et == gtString:
		w.skipStrings(n)
		return nil
	case et == gtArray:
		w.fail("nested arrays are not used by GGUF models")
		return nil
	}
	size := scalarSize(et)
	if size == 0 {
		w.fail("unknown array element type %d", et)
		return nil
	}
	if n > MaxHeaderBytes/size {
		w.fail("array of %d elements is larger than the header limit", n)
		return nil
	}
	b := w.take(n * size)
	if b == nil || n > maxKeptArray {
		return nil
	}
	return decodeArray(et, size, n, b)
}

func decodeArray(et uint32, size, n uint64, b []byte) any {
	if et == gtF32 || et == gtF64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = decodeScalar(et, b[uint64(i)*size:]).(float64)
		}
		return out
	}
	out := make([]int64, n)
	for i := range out {
		switch v := decodeScalar(et, b[uint64(i)*size:]).(type) {
		case int64:
			out[i] = v
		case bool:
			out[i] = int64(b[uint64(i)*size])
		case uint64:
			out[i] = math.MaxInt64 // a flag value past int64; never a count
		}
	}
	return out
}

// skipStrings skips n strings, failing early when even their length
// prefixes cannot fit the limit.
func (w *walker) skipStrings(n uint64) {
	if n > MaxHeaderBytes/8 {
		w.fail("array of %d strings is larger than the header limit", n)
		return
	}
	for i := uint64(0); i < n && w.err == nil; i++ {
		w.take(w.u64())
	}
}

// maxDims is GGML's tensor rank limit.
const maxDims = 4

func (w *walker) tensor() TensorEntry {
	t := TensorEntry{Name: w.str()}
	nd := w.u32()
	if w.err == nil && nd > maxDims {
		w.fail("tensor %q has %d dimensions (max %d)", t.Name, nd, maxDims)
	}
	if w.err != nil {
		return t
	}
	t.Shape = make([]uint64, nd)
	elems := uint64(1)
	for i := range t.Shape {
		t.Shape[i] = w.u64()
		if d := t.Shape[i]; d != 0 && elems > math.MaxInt64/d {
			w.fail("tensor %q: element count overflows", t.Name)
			return t
		}
		elems *= t.Shape[i]
	}
	t.Type, t.Offset = w.u32(), w.u64()
	if tt, ok := tensorTypes[t.Type]; ok && w.err == nil {
		t.Size = elems / tt.block * tt.bytes
	}
	return t
}

func (w *walker) place(h *Header) {
	h.Alignment = 32
	if a, ok := h.KV["general.alignment"].(int64); ok {
		if a <= 0 || a&(a-1) != 0 || a > 1<<20 {
			w.fail("general.alignment %d is not a power of two", a)
			return
		}
		h.Alignment = uint64(a)
	}
	h.DataOffset = (w.off + h.Alignment - 1) / h.Alignment * h.Alignment
}

// tensorType is a ggml type's block layout (ggml_type_traits).
type tensorType struct {
	name         string
	block, bytes uint64 // elements per block, bytes per block
}

// tensorTypes covers every ggml_type id GGUF files use, including those the
// engine cannot run yet, so sizes and parameter counts are known before a
// download.
var tensorTypes = map[uint32]tensorType{
	0: {"F32", 1, 4}, 1: {"F16", 1, 2}, 2: {"Q4_0", 32, 18}, 3: {"Q4_1", 32, 20},
	6: {"Q5_0", 32, 22}, 7: {"Q5_1", 32, 24}, 8: {"Q8_0", 32, 34}, 9: {"Q8_1", 32, 36},
	10: {"Q2_K", 256, 84}, 11: {"Q3_K", 256, 110}, 12: {"Q4_K", 256, 144}, 13: {"Q5_K", 256, 176},
	14: {"Q6_K", 256, 210}, 15: {"Q8_K", 256, 292}, 16: {"IQ2_XXS", 256, 66}, 17: {"IQ2_XS", 256, 74},
	18: {"IQ3_XXS", 256, 98}, 19: {"IQ1_S", 256, 50}, 20: {"IQ4_NL", 32, 18}, 21: {"IQ3_S", 256, 110},
	22: {"IQ2_S", 256, 82}, 23: {"IQ4_XS", 256, 136}, 24: {"I8", 1, 1}, 25: {"I16", 1, 2},
	26: {"I32", 1, 4}, 27: {"I64", 1, 8}, 28: {"F64", 1, 8}, 29: {"IQ1_M", 256, 56},
	30: {"BF16", 1, 2}, 31: {"Q4_0_4_4", 32, 18}, 32: {"Q4_0_4_8", 32, 18}, 33: {"Q4_0_8_8", 32, 18},
	34: {"TQ1_0", 256, 54}, 35: {"TQ2_0", 256, 66}, 39: {"MXFP4", 32, 17},
}

// TypeName is the ggml name of a tensor type id.
func TypeName(t uint32) string {
	if tt, ok := tensorTypes[t]; ok {
		return tt.name
	}
	return fmt.Sprintf("type%d", t)
}
