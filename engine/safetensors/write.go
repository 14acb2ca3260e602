package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Write writes tensors (in the given order) and metadata as a safetensors
// file. It is used by tests and tools that generate models.
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	header := map[string]any{}
	if len(metadata) > 0 {
		header["__metadata__"] = metadata
	}
	var off int64
	for _, t := range tensors {
		size, ok := DTypeSize[t.DType]
		if !ok {
			return fmt.Errorf("safetensors: tensor %q: unknown dtype %q", t.Name, t.DType)
		}
		if n, err := byteSize(t.Shape, size); err != nil || n != uint64(len(t.Data)) {
			return fmt.Errorf("safetensors: tensor %q: %d bytes for shape %v of %s", t.Name, len(t.Data), t.Shape, t.DType)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int64{}
		}
		header[t.Name] = headerEntry{DType: t.DType, Shape: shape, DataOffsets: [2]int64{off, off + int64(len(t.Data))}}
		off += int64(len(t.Data))
	}
	js, err := json.Marshal(header)
	if err != nil {
		return err
	}
	// Pad the header with spaces so the data starts 8-byte aligned.
	js = append(js, bytes.Repeat([]byte(" "), (8-len(js)%8)%8)...)
	if err := binary.Write(w, binary.LittleEndian, uint64(len(js))); err != nil {
		return err
	}
	if _, err := w.Write(js); err != nil {
		return err
	}
	for _, t := range tensors {
		if _, err := w.Write(t.Data); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes a safetensors file at path.
func WriteFile(path string, tensors []Tensor, metadata map[string]string) error {
	var buf bytes.Buffer
	if err := Write(&buf, tensors, metadata); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
