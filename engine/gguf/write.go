package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"flowchat/engine/fileio"
	"flowchat/engine/ggml"
)

// Writer builds a GGUF (version 3) file: metadata in insertion order, then
// the tensor directory, then aligned tensor data.
type Writer struct {
	Alignment uint64
	kv        []KeyValue
	kvIndex   map[string]int
	tensors   []wTensor
}

type wTensor struct {
	info  TensorInfo
	write func(io.Writer) error
}

// NewWriter returns an empty writer with the default alignment.
func NewWriter() *Writer {
	return &Writer{Alignment: DefaultAlignment, kvIndex: map[string]int{}}
}

// Set stores a metadata value, replacing an earlier one with the same key.
// v is a Go value of a GGUF type (uint8 … float64, bool, string), a slice of
// one of those, or a Value.
func (w *Writer) Set(key string, v any) {
	val, ok := v.(Value)
	if !ok {
		val = valueOf(v)
	}
	if i, ok := w.kvIndex[key]; ok {
		w.kv[i].Value = val
		return
	}
	w.kvIndex[key] = len(w.kv)
	w.kv = append(w.kv, KeyValue{Key: key, Value: val})
}

// CopyKV copies every metadata entry of f (a converter's starting point).
func (w *Writer) CopyKV(f *File) {
	for _, kv := range f.KV {
		w.Set(kv.Key, kv.Value)
	}
}

func valueOf(v any) Value {
	switch x := v.(type) {
	case uint8:
		return Value{Type: TypeUint8, V: x}
	case int8:
		return Value{Type: TypeInt8, V: x}
	case uint16:
		return Value{Type: TypeUint16, V: x}
	case int16:
		return Value{Type: TypeInt16, V: x}
	case uint32:
		return Value{Type: TypeUint32, V: x}
	case int32:
		return Value{Type: TypeInt32, V: x}
	case int:
		return Value{Type: TypeInt32, V: int32(x)}
	case float32:
		return Value{Type: TypeFloat32, V: x}
	case bool:
		return Value{Type: TypeBool, V: x}
	case string:
		return Value{Type: TypeString, V: x}
	case uint64:
		return Value{Type: TypeUint64, V: x}
	case int64:
		return Value{Type: TypeInt64, V: x}
	case float64:
		return Value{Type: TypeFloat64, V: x}
	case []uint8:
		return Value{Type: TypeArray, ArrayType: TypeUint8, V: x}
	case []int8:
		return Value{Type: TypeArray, ArrayType: TypeInt8, V: x}
	case []uint16:
		return Value{Type: TypeArray, ArrayType: TypeUint16, V: x}
	case []int16:
		return Value{Type: TypeArray, ArrayType: TypeInt16, V: x}
	case []uint32:
		return Value{Type: TypeArray, ArrayType: TypeUint32, V: x}
	case []int32:
		return Value{Type: TypeArray, ArrayType: TypeInt32, V: x}
	case []float32:
		return Value{Type: TypeArray, ArrayType: TypeFloat32, V: x}
	case []bool:
		return Value{Type: TypeArray, ArrayType: TypeBool, V: x}
	case []string:
		return Value{Type: TypeArray, ArrayType: TypeString, V: x}
	case []uint64:
		return Value{Type: TypeArray, ArrayType: TypeUint64, V: x}
	case []int64:
		return Value{Type: TypeArray, ArrayType: TypeInt64, V: x}
	case []float64:
		return Value{Type: TypeArray, ArrayType: TypeFloat64, V: x}
	case []Value:
		return Value{Type: TypeArray, ArrayType: TypeArray, V: x}
	}
	panic(fmt.Sprintf("gguf: unsupported metadata value type %T", v))
}

// AddTensor adds a tensor whose bytes are data (t.RowSize per row).
func (w *Writer) AddTensor(name string, t ggml.Type, shape []uint64, data []byte) {
	w.AddTensorFunc(name, t, shape, func(out io.Writer) error {
		_, err := out.Write(data)
		return err
	})
	if got := w.tensors[len(w.tensors)-1].info.Size; got != uint64(len(data)) {
		panic(fmt.Sprintf("gguf: tensor %s: %d bytes given, shape needs %d", name, len(data), got))
	}
}

// AddTensorFunc adds a tensor whose bytes are produced by write when the
// file is written (so that large tensors need not be held in memory); write
// must produce exactly the size the type and shape imply.
func (w *Writer) AddTensorFunc(name string, t ggml.Type, shape []uint64, write func(io.Writer) error) {
	info := TensorInfo{Name: name, Type: t, Shape: append([]uint64(nil), shape...)}
	info.Size = info.Elements() / uint64(t.BlockSize()) * uint64(t.TypeSize())
	w.tensors = append(w.tensors, wTensor{info: info, write: write})
}

// WriteTo writes the whole file.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	if w.Alignment != DefaultAlignment {
		w.Set("general.alignment", uint32(w.Alignment))
	}
	cw := &countWriter{w: bufio.NewWriterSize(out, 1<<20)}
	e := &encoder{w: cw}
	e.u32(Magic)
	e.u32(3)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(w.kv)))
	for _, kv := range w.kv {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.Type))
		e.value(kv.Value)
	}
	var off uint64
	for i := range w.tensors {
		t := &w.tensors[i].info
		t.Offset = off
		e.str(t.Name)
		e.u32(uint32(len(t.Shape)))
		for _, d := range t.Shape {
			e.u64(d)
		}
		e.u32(uint32(t.Type))
		e.u64(t.Offset)
		off = alignUp(off+t.Size, w.Alignment)
	}
	e.pad(w.Alignment)
	if e.err != nil {
		return cw.n, e.err
	}
	for _, t := range w.tensors {
		start := cw.n
		if err := t.write(cw); err != nil {
			return cw.n, fmt.Errorf("gguf: writing tensor %s: %w", t.info.Name, err)
		}
		if got := uint64(cw.n - start); got != t.info.Size {
			return cw.n, fmt.Errorf("gguf: tensor %s: wrote %d bytes, shape needs %d", t.info.Name, got, t.info.Size)
		}
		e.pad(w.Alignment)
	}
	if e.err == nil {
		e.err = cw.w.Flush()
	}
	return cw.n, e.err
}

// WriteFile writes the file atomically: a temporary file in the same
// directory, fsynced, then renamed over path. A crash or a full disk leaves
// any earlier file at path untouched.
func (w *Writer) WriteFile(path string) error {
	err := fileio.WriteWith(path, 0o644, func(out io.Writer) error {
		_, err := w.WriteTo(out)
		return err
	})
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	return nil
}

type countWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type encoder struct {
	w   *countWriter
	err error
	buf [8]byte
}

func (e *encoder) bytes(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *encoder) u8(v uint8)   { e.bytes([]byte{v}) }
func (e *encoder) u16(v uint16) { binary.LittleEndian.PutUint16(e.buf[:], v); e.bytes(e.buf[:2]) }
func (e *encoder) u32(v uint32) { binary.LittleEndian.PutUint32(e.buf[:], v); e.bytes(e.buf[:4]) }
func (e *encoder) u64(v uint64) { binary.LittleEndian.PutUint64(e.buf[:], v); e.bytes(e.buf[:8]) }
func (e *encoder) str(s string) { e.u64(uint64(len(s))); e.bytes([]byte(s)) }

func (e *encoder) pad(a uint64) {
	if n := alignUp(uint64(e.w.n), a) - uint64(e.w.n); n > 0 {
		e.bytes(make([]byte, n))
	}
}

func (e *encoder) value(v Value) {
	switch x := v.V.(type) {
	case uint8:
		e.u8(x)
	case int8:
		e.u8(uint8(x))
	case uint16:
		e.u16(x)
	case int16:
		e.u16(uint16(x))
	case uint32:
		e.u32(x)
	case int32:
		e.u32(uint32(x))
	case float32:
		e.u32(math.Float32bits(x))
	case bool:
		e.u8(b2u(x))
	case string:
		e.str(x)
	case uint64:
		e.u64(x)
	case int64:
		e.u64(uint64(x))
	case float64:
		e.u64(math.Float64bits(x))
	default:
		e.array(v)
	}
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

func (e *encoder) array(v Value) {
	e.u32(uint32(v.ArrayType))
	switch x := v.V.(type) {
	case []uint8:
		writeArr(e, x, e.u8)
	case []int8:
		writeArr(e, x, func(i int8) { e.u8(uint8(i)) })
	case []uint16:
		writeArr(e, x, e.u16)
	case []int16:
		writeArr(e, x, func(i int16) { e.u16(uint16(i)) })
	case []uint32:
		writeArr(e, x, e.u32)
	case []int32:
		writeArr(e, x, func(i int32) { e.u32(uint32(i)) })
	case []float32:
		writeArr(e, x, func(f float32) { e.u32(math.Float32bits(f)) })
	case []bool:
		writeArr(e, x, func(b bool) { e.u8(b2u(b)) })
	case []string:
		writeArr(e, x, e.str)
	case []uint64:
		writeArr(e, x, e.u64)
	case []int64:
		writeArr(e, x, func(i int64) { e.u64(uint64(i)) })
	case []float64:
		writeArr(e, x, func(f float64) { e.u64(math.Float64bits(f)) })
	case []Value:
		writeArr(e, x, e.array) // each element: (type, count, values)
	default:
		e.err = fmt.Errorf("gguf: cannot encode %T", v.V)
	}
}

func writeArr[T any](e *encoder, xs []T, put func(T)) {
	e.u64(uint64(len(xs)))
	for _, x := range xs {
		put(x)
	}
}
