// Package gguf reads and writes GGUF files (versions 2 and 3): the key/value
// metadata with every value type, the tensor directory, alignment, and tensor
// data, which is memory-mapped rather than read.
//
// The reader treats the file as hostile: every count and length is checked
// against the bytes that remain before anything is allocated, tensor extents
// are checked against the file, and errors say what was wrong and where.
package gguf

import (
	"errors"
	"fmt"
	"math"

	"flowchat/engine/fileio"
	"flowchat/engine/ggml"
)

// Magic is "GGUF" read as a little-endian uint32.
const Magic = 0x46554747

// DefaultAlignment is used when general.alignment is absent.
const DefaultAlignment = 32

// MaxDims is GGML's tensor rank limit.
const MaxDims = 4

// ErrFormat is wrapped by every error about a malformed file.
var ErrFormat = errors.New("gguf: malformed file")

// ErrUnsupportedTensorType is wrapped when a tensor's type is unknown to ggml.
var ErrUnsupportedTensorType = errors.New("unsupported tensor type")

// ValueType is the type tag of a metadata value.
type ValueType uint32

const (
	TypeUint8 ValueType = iota
	TypeInt8
	TypeUint16
	TypeInt16
	TypeUint32
	TypeInt32
	TypeFloat32
	TypeBool
	TypeString
	TypeArray
	TypeUint64
	TypeInt64
	TypeFloat64
)

var valueTypeNames = [...]string{"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"}

func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("valuetype(%d)", uint32(t))
}

// Value is one metadata value. V holds uint8, int8, uint16, int16, uint32,
// int32, float32, bool, string, uint64, int64 or float64; arrays hold a typed
// slice of those ([]int32, []string, …) or []Value for arrays of arrays.
type Value struct {
	Type      ValueType
	ArrayType ValueType // element type when Type == TypeArray
	V         any
}

// KeyValue is one metadata entry.
type KeyValue struct {
	Key   string
	Value Value
}

// TensorInfo describes one tensor. Shape is in GGML order: Shape[0] is the
// number of elements of a row (the fastest-varying dimension).
type TensorInfo struct {
	Name   string
	Shape  []uint64
	Type   ggml.Type
	Offset uint64 // from the start of the data section
	Size   uint64 // bytes
}

// Elements is the product of the shape.
func (t *TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Rows is the number of rows (elements / Shape[0]).
func (t *TensorInfo) Rows() uint64 {
	if len(t.Shape) == 0 || t.Shape[0] == 0 {
		return 0
	}
	return t.Elements() / t.Shape[0]
}

// File is a parsed GGUF file.
type File struct {
	Path       string
	Version    uint32
	Alignment  uint64
	KV         []KeyValue   // in file order
	Tensors    []TensorInfo // in file order
	DataOffset uint64       // file offset of the tensor data section

	data    []byte // the whole file (mapped or read)
	kvIndex map[string]int
	tIndex  map[string]int
	closer  func() error
}

// Close releases the mapping. Tensor data slices must not be used after.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	c := f.closer
	f.closer, f.data = nil, nil
	return c()
}

// ReleaseResident drops the mapped file's pages from the process's
// resident set (fileio.Unmap): they are read back on use. It does nothing
// for a file read into memory (ReadFile).
func (f *File) ReleaseResident() error {
	if f.closer == nil {
		return nil
	}
	return fileio.Unmap(f.data)
}

// Size is the file size in bytes.
func (f *File) Size() int64 { return int64(len(f.data)) }

// Get returns the value stored under key.
func (f *File) Get(key string) (Value, bool) {
	i, ok := f.kvIndex[key]
	if !ok {
		return Value{}, false
	}
	return f.KV[i].Value, true
}

// Tensor returns the named tensor's directory entry.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i, ok := f.tIndex[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// TensorData returns the bytes of t, a slice of the mapped file.
func (f *File) TensorData(t *TensorInfo) []byte {
	start := f.DataOffset + t.Offset
	return f.data[start : start+t.Size : start+t.Size]
}

// String returns a string value.
func (f *File) String(key string) (string, bool) {
	v, ok := f.Get(key)
	if !ok {
		return "", false
	}
	s, ok := v.V.(string)
	return s, ok
}

// Bool returns a bool value.
func (f *File) Bool(key string) (bool, bool) {
	v, ok := f.Get(key)
	if !ok {
		return false, false
	}
	b, ok := v.V.(bool)
	return b, ok
}

// Uint returns any non-negative integer value as uint64.
func (f *File) Uint(key string) (uint64, bool) {
	i, ok := f.Int(key)
	if !ok || i < 0 {
		if v, ok2 := f.Get(key); ok2 {
			if u, ok3 := v.V.(uint64); ok3 {
				return u, true
			}
		}
		return 0, false
	}
	return uint64(i), true
}

// Int returns any integer value as int64 (uint64 values above MaxInt64 fail).
func (f *File) Int(key string) (int64, bool) {
	v, ok := f.Get(key)
	if !ok {
		return 0, false
	}
	return toInt(v.V)
}

func toInt(x any) (int64, bool) {
	switch n := x.(type) {
	case uint8:
		return int64(n), true
	case int8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case int16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case int32:
		return int64(n), true
	case uint64:
		if n > math.MaxInt64 {
			return 0, false
		}
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

// Float returns a float (or integer) value as float64.
func (f *File) Float(key string) (float64, bool) {
	v, ok := f.Get(key)
	if !ok {
		return 0, false
	}
	switch n := v.V.(type) {
	case float32:
		return float64(n), true
	case float64:
		return n, true
	}
	i, ok := toInt(v.V)
	return float64(i), ok
}

// Strings returns an array of strings.
func (f *File) Strings(key string) ([]string, bool) {
	v, ok := f.Get(key)
	if !ok {
		return nil, false
	}
	s, ok := v.V.([]string)
	return s, ok
}

// Float32s returns an array of float32.
func (f *File) Float32s(key string) ([]float32, bool) {
	v, ok := f.Get(key)
	if !ok {
		return nil, false
	}
	s, ok := v.V.([]float32)
	return s, ok
}

// Int32s returns an integer array converted to int32 (values must fit).
func (f *File) Int32s(key string) ([]int32, bool) {
	v, ok := f.Get(key)
	if !ok {
		return nil, false
	}
	if s, ok := v.V.([]int32); ok {
		return s, true
	}
	return convertInts(v.V)
}

func convertInts(x any) ([]int32, bool) {
	var out []int32
	add := func(i int64) bool {
		if i < math.MinInt32 || i > math.MaxInt32 {
			return false
		}
		out = append(out, int32(i))
		return true
	}
	switch s := x.(type) {
	case []uint8:
		for _, e := range s {
			add(int64(e))
		}
	case []int8:
		for _, e := range s {
			add(int64(e))
		}
	case []uint16:
		for _, e := range s {
			add(int64(e))
		}
	case []int16:
		for _, e := range s {
			add(int64(e))
		}
	case []uint32:
		for _, e := range s {
			if !add(int64(e)) {
				return nil, false
			}
		}
	case []int64:
		for _, e := range s {
			if !add(e) {
				return nil, false
			}
		}
	case []uint64:
		for _, e := range s {
			if e > math.MaxInt32 || !add(int64(e)) {
				return nil, false
			}
		}
	default:
		return nil, false
	}
	return out, true
}
