// Package safetensors reads (and, for tests and tools, writes) the
// safetensors format: an 8-byte little-endian header length N, N bytes of
// JSON naming each tensor's dtype, shape and byte range, then the raw
// little-endian tensor bytes. A model may be split over several files with
// a model.safetensors.index.json mapping tensor names to files.
//
// Files are memory-mapped; a Tensor's Data is a slice of the mapping and is
// valid until the File is closed. The header is untrusted input: its size,
// every shape and every byte range are checked before use.
package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"sort"

	"flowchat/engine/fileio"
)

// MaxHeaderSize bounds the JSON header (the reference implementation's
// limit is 100 MB); a larger length field is refused before any allocation.
const MaxHeaderSize = 100 << 20

// ErrFormat is wrapped by every error about malformed file contents.
var ErrFormat = errors.New("safetensors: malformed file")

// DTypeSize is the size in bytes of one element of each known dtype.
var DTypeSize = map[string]int{
	"F64": 8, "F32": 4, "F16": 2, "BF16": 2,
	"I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1,
	"U16": 2, "U32": 4, "U64": 8, "F8_E4M3": 1, "F8_E5M2": 1,
}

// Tensor is one named tensor. Shape is in PyTorch order (outermost first):
// a linear layer's weight is [out, in], so a row of Data is one output.
type Tensor struct {
	Name  string
	DType string
	Shape []int64
	Data  []byte
	// Offset is where Data starts in the file's data section.
	Offset int64
}

// Elements is the product of the shape (1 for a scalar).
func (t *Tensor) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// File is one parsed safetensors file.
type File struct {
	Path     string
	Metadata map[string]string
	Tensors  []Tensor // in data order
	Size     int64

	byName map[string]int
	closer func() error
}

// Open maps and parses path.
func Open(path string) (*File, error) {
	data, closer, err := fileio.Map(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		closer()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Path, f.closer = path, closer
	return f, nil
}

// Close releases the mapping; tensor data must not be used after.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	c := f.closer
	f.closer = nil
	return c()
}

// Tensor returns the tensor named name.
func (f *File) Tensor(name string) (*Tensor, bool) {
	i, ok := f.byName[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// headerEntry is one tensor's entry in the JSON header.
type headerEntry struct {
	DType       string   `json:"dtype"`
	Shape       []int64  `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

// Parse reads a whole file held in memory; tensors alias data.
func Parse(data []byte) (*File, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("%w: %d bytes is shorter than the header length", ErrFormat, len(data))
	}
	n := binary.LittleEndian.Uint64(data)
	if n > MaxHeaderSize || n > uint64(len(data)-8) {
		return nil, fmt.Errorf("%w: header length %d (file %d bytes, limit %d)", ErrFormat, n, len(data), MaxHeaderSize)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data[8:8+n], &raw); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrFormat, err)
	}
	f := &File{Size: int64(len(data)), byName: map[string]int{}}
	body := data[8+n:]
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &f.Metadata); err != nil {
				return nil, fmt.Errorf("%w: __metadata__: %v", ErrFormat, err)
			}
			continue
		}
		t, err := parseEntry(name, msg, body)
		if err != nil {
			return nil, err
		}
		f.Tensors = append(f.Tensors, t)
	}
	return f, f.index()
}

func parseEntry(name string, msg json.RawMessage, body []byte) (Tensor, error) {
	var e headerEntry
	if err := json.Unmarshal(msg, &e); err != nil {
		return Tensor{}, fmt.Errorf("%w: tensor %q: %v", ErrFormat, name, err)
	}
	size, ok := DTypeSize[e.DType]
	if !ok {
		return Tensor{}, fmt.Errorf("%w: tensor %q has unknown dtype %q", ErrFormat, name, e.DType)
	}
	bytes, err := byteSize(e.Shape, size)
	if err != nil {
		return Tensor{}, fmt.Errorf("%w: tensor %q: %v", ErrFormat, name, err)
	}
	b, end := e.DataOffsets[0], e.DataOffsets[1]
	if b < 0 || end < b || end > int64(len(body)) || uint64(end-b) != bytes {
		return Tensor{}, fmt.Errorf("%w: tensor %q: byte range [%d, %d) for %d bytes of data (body %d bytes)", ErrFormat, name, b, end, bytes, len(body))
	}
	return Tensor{Name: name, DType: e.DType, Shape: e.Shape, Data: body[b:end:end], Offset: b}, nil
}

// byteSize multiplies the shape by the element size, refusing negative
// dimensions and overflow.
func byteSize(shape []int64, elem int) (uint64, error) {
	if len(shape) > 8 {
		return 0, fmt.Errorf("%d dimensions", len(shape))
	}
	n := uint64(elem)
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("negative dimension in %v", shape)
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > 1<<62 {
			return 0, fmt.Errorf("shape %v overflows", shape)
		}
		n = lo
	}
	return n, nil
}

// index sorts tensors by offset, refuses overlapping byte ranges, and
// builds the name index.
func (f *File) index() error {
	sort.Slice(f.Tensors, func(i, j int) bool {
		a, b := &f.Tensors[i], &f.Tensors[j]
		return a.Offset < b.Offset || a.Offset == b.Offset && a.Name < b.Name
	})
	end := int64(0)
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if t.Offset < end && len(t.Data) > 0 {
			return fmt.Errorf("%w: tensor %q overlaps the one before it", ErrFormat, t.Name)
		}
		end = max(end, t.Offset+int64(len(t.Data)))
		f.byName[t.Name] = i
	}
	return nil
}

// readJSON decodes a small JSON file (index, config) with a size limit.
func readJSON(path string, limit int64, v any) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.Size() > limit {
		return fmt.Errorf("%s: %d bytes is over the %d-byte limit", path, st.Size(), limit)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
