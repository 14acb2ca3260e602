package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"

	"flowchat/engine/fileio"
	"flowchat/engine/ggml"
)

// Open maps the file at path and parses it.
func Open(path string) (*File, error) {
	data, closer, err := fileio.Map(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: open %s: %w", path, err)
	}
	f, err := Parse(data)
	if err != nil {
		closer()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Path, f.closer = path, closer
	return f, nil
}

// ReadFile reads (rather than maps) the whole file and parses it.
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

// Parse parses a whole GGUF file held in data. The File keeps data.
func Parse(data []byte) (*File, error) {
	r := &reader{b: data}
	f := &File{data: data, kvIndex: map[string]int{}, tIndex: map[string]int{}}
	if err := r.header(f); err != nil {
		return nil, err
	}
	if r.err != nil {
		return nil, r.err
	}
	return f, nil
}

type reader struct {
	b   []byte
	off uint64
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: at byte %d: %s", ErrFormat, r.off, fmt.Sprintf(format, args...))
	}
}

func (r *reader) remaining() uint64 { return uint64(len(r.b)) - r.off }

// take returns the next n bytes, or nil after recording an error.
func (r *reader) take(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > r.remaining() {
		r.fail("need %d bytes, file has %d left (truncated?)", n, r.remaining())
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) u8() uint8 {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if b := r.take(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if b := r.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (r *reader) str() string {
	n := r.u64()
	return string(r.take(n))
}

func (r *reader) header(f *File) error {
	magic := r.u32()
	if r.err != nil || magic != Magic {
		return fmt.Errorf("%w: not a GGUF file (bad magic %#x)", ErrFormat, magic)
	}
	f.Version = r.u32()
	switch {
	case f.Version == 1:
		return fmt.Errorf("%w: GGUF version 1 is obsolete; reconvert the model", ErrFormat)
	case f.Version == 0 || f.Version > 3:
		if v := f.Version; v&0xffff == 0 {
			return fmt.Errorf("%w: big-endian GGUF files are not supported", ErrFormat)
		}
		return fmt.Errorf("%w: unsupported GGUF version %d", ErrFormat, f.Version)
	}
	nTensors, nKV := r.u64(), r.u64()
	// Each KV needs ≥ 8+4 bytes and each tensor ≥ 8+4+4+8: reject absurd
	// counts before allocating for them.
	if nKV > r.remaining()/12 || nTensors > r.remaining()/24 {
		r.fail("counts too large for the file: %d tensors, %d keys", nTensors, nKV)
		return r.err
	}
	r.readKVs(f, nKV)
	r.readTensorInfos(f, nTensors)
	if r.err != nil {
		return r.err
	}
	return r.placeData(f)
}

func (r *reader) readKVs(f *File, n uint64) {
	f.KV = make([]KeyValue, 0, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		key := r.str()
		t := ValueType(r.u32())
		v := r.value(t, 0)
		if r.err != nil {
			r.err = fmt.Errorf("key %q: %w", key, r.err)
			return
		}
		if _, dup := f.kvIndex[key]; dup {
			r.fail("duplicate key %q", key)
			return
		}
		f.kvIndex[key] = len(f.KV)
		f.KV = append(f.KV, KeyValue{Key: key, Value: v})
	}
}

// value reads one value of type t; depth limits nested arrays.
func (r *reader) value(t ValueType, depth int) Value {
	v := Value{Type: t}
	switch t {
	case TypeUint8:
		v.V = r.u8()
	case TypeInt8:
		v.V = int8(r.u8())
	case TypeUint16:
		v.V = r.u16()
	case TypeInt16:
		v.V = int16(r.u16())
	case TypeUint32:
		v.V = r.u32()
	case TypeInt32:
		v.V = int32(r.u32())
	case TypeFloat32:
		v.V = math.Float32frombits(r.u32())
	case TypeBool:
		b := r.u8()
		if b > 1 {
			r.fail("invalid bool %d", b)
		}
		v.V = b == 1
	case TypeString:
		v.V = r.str()
	case TypeUint64:
		v.V = r.u64()
	case TypeInt64:
		v.V = int64(r.u64())
	case TypeFloat64:
		v.V = math.Float64frombits(r.u64())
	case TypeArray:
		if depth > 4 {
			r.fail("arrays nested too deeply")
			return v
		}
		v.ArrayType = ValueType(r.u32())
		v.V = r.array(v.ArrayType, r.u64(), depth)
	default:
		r.fail("unknown value type %d", uint32(t))
	}
	return v
}

// elemSize is the minimum encoded size of one element of type t.
func elemSize(t ValueType) uint64 {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64, TypeString:
		return 8
	case TypeArray:
		return 12
	}
	return 1
}

func (r *reader) array(t ValueType, n uint64, depth int) any {
	if r.err != nil {
		return nil
	}
	if n > r.remaining()/elemSize(t) {
		r.fail("array of %d %s elements exceeds the file", n, t)
		return nil
	}
	switch t {
	case TypeUint8:
		return readN(r, n, r.u8)
	case TypeInt8:
		return readN(r, n, func() int8 { return int8(r.u8()) })
	case TypeUint16:
		return readN(r, n, r.u16)
	case TypeInt16:
		return readN(r, n, func() int16 { return int16(r.u16()) })
	case TypeUint32:
		return readN(r, n, r.u32)
	case TypeInt32:
		return readN(r, n, func() int32 { return int32(r.u32()) })
	case TypeFloat32:
		return readN(r, n, func() float32 { return math.Float32frombits(r.u32()) })
	case TypeBool:
		return readN(r, n, func() bool { return r.u8() != 0 })
	case TypeString:
		return readN(r, n, r.str)
	case TypeUint64:
		return readN(r, n, r.u64)
	case TypeInt64:
		return readN(r, n, func() int64 { return int64(r.u64()) })
	case TypeFloat64:
		return readN(r, n, func() float64 { return math.Float64frombits(r.u64()) })
	case TypeArray:
		return readN(r, n, func() Value { return r.value(TypeArray, depth+1) })
	}
	r.fail("unknown array element type %d", uint32(t))
	return nil
}

func readN[T any](r *reader, n uint64, next func() T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = next()
		if r.err != nil {
			return nil
		}
	}
	return out
}

func (r *reader) readTensorInfos(f *File, n uint64) {
	f.Tensors = make([]TensorInfo, 0, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		t := r.tensorInfo()
		if r.err != nil {
			return
		}
		if _, dup := f.tIndex[t.Name]; dup {
			r.fail("duplicate tensor %q", t.Name)
			return
		}
		f.tIndex[t.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
	}
}

func (r *reader) tensorInfo() TensorInfo {
	t := TensorInfo{Name: r.str()}
	nd := r.u32()
	if nd > MaxDims {
		r.fail("tensor %q has %d dimensions (max %d)", t.Name, nd, MaxDims)
		return t
	}
	t.Shape = make([]uint64, nd)
	elems := uint64(1)
	for i := range t.Shape {
		t.Shape[i] = r.u64()
		if d := t.Shape[i]; d != 0 && elems > math.MaxInt64/d {
			r.fail("tensor %q: element count overflows", t.Name)
			return t
		}
		elems *= t.Shape[i]
	}
	t.Type = ggml.Type(r.u32())
	t.Offset = r.u64()
	if r.err != nil {
		return t
	}
	if !t.Type.Known() {
		r.err = fmt.Errorf("tensor %q: %w %v", t.Name, ErrUnsupportedTensorType, t.Type)
		return t
	}
	bs := uint64(t.Type.BlockSize())
	if nd > 0 && t.Shape[0]%bs != 0 {
		r.fail("tensor %q: row length %d is not a multiple of the %v block size %d", t.Name, t.Shape[0], t.Type, bs)
		return t
	}
	t.Size = elems / bs * uint64(t.Type.TypeSize())
	return t
}

func (r *reader) placeData(f *File) error {
	f.Alignment = DefaultAlignment
	if a, ok := f.Get("general.alignment"); ok {
		n, ok := toInt(a.V)
		if !ok || n <= 0 || n&(n-1) != 0 || n > 1<<20 {
			return fmt.Errorf("%w: general.alignment %v is not a power of two", ErrFormat, a.V)
		}
		f.Alignment = uint64(n)
	}
	f.DataOffset = alignUp(r.off, f.Alignment)
	size := uint64(len(r.b))
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if t.Offset%f.Alignment != 0 {
			return fmt.Errorf("%w: tensor %q offset %d is not aligned to %d", ErrFormat, t.Name, t.Offset, f.Alignment)
		}
		if f.DataOffset > size || t.Offset > size-f.DataOffset || t.Size > size-f.DataOffset-t.Offset {
			return fmt.Errorf("%w: tensor %q (%d bytes at %d) extends past the end of the file (%d bytes): truncated download?", ErrFormat, t.Name, t.Size, f.DataOffset+t.Offset, size)
		}
	}
	return nil
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) / a * a }
