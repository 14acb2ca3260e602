// Package llama2c reads Andrej Karpathy's llama2.c checkpoints (the legacy
// "version 0" export: seven int32 hyperparameters, then float32 weights in
// a fixed order) and their tokenizer.bin.
//
// llama2.c exports Meta-layout weights, whose RoPE pairs are interleaved
// (GGUF's order), so the spec (specs/llama2c.json) needs no permutation.
package llama2c

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"flowchat/engine/fileio"
	"flowchat/engine/ggml"
	"flowchat/engine/model"
)

// ErrFormat is wrapped for files that are not llama2.c checkpoints.
var ErrFormat = errors.New("llama2c: malformed file")

// Header is the checkpoint's Config struct.
type Header struct {
	Dim, HiddenDim, NLayers, NHeads, NKVHeads, VocabSize, SeqLen int32
}

const headerSize = 7 * 4

// Checkpoint is an opened .bin file, its weights under canonical names.
type Checkpoint struct {
	Path   string
	Header Header
	Shared bool // classifier tied to the embedding
	Size   int64
	byName map[string]*model.Weight
	closer func() error
}

// Weight implements model.Source.
func (c *Checkpoint) Weight(name string) (*model.Weight, bool) {
	w, ok := c.byName[name]
	return w, ok
}

// Close releases the mapping.
func (c *Checkpoint) Close() error {
	if c.closer == nil {
		return nil
	}
	f := c.closer
	c.closer = nil
	return f()
}

// Sniff reports whether data starts like a llama2.c checkpoint of size n.
func Sniff(data []byte, n int64) bool {
	h, shared, err := parseHeader(data)
	return err == nil && h.expectedSize(shared) == n
}

func parseHeader(data []byte) (Header, bool, error) {
	if len(data) < headerSize {
		return Header{}, false, fmt.Errorf("%w: %d bytes", ErrFormat, len(data))
	}
	v := make([]int32, 7)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(data[4*i:]))
	}
	h := Header{v[0], v[1], v[2], v[3], v[4], v[5], v[6]}
	shared := h.VocabSize > 0
	if !shared {
		h.VocabSize = -h.VocabSize
	}
	if h.Dim <= 0 || h.HiddenDim <= 0 || h.NLayers <= 0 || h.NHeads <= 0 || h.NKVHeads <= 0 ||
		h.VocabSize <= 0 || h.SeqLen <= 0 || h.Dim%h.NHeads != 0 || h.NHeads%h.NKVHeads != 0 ||
		h.Dim > 1<<16 || h.HiddenDim > 1<<18 || h.NLayers > 1<<10 || h.VocabSize > 1<<22 || h.SeqLen > 1<<20 {
		return h, shared, fmt.Errorf("%w: implausible header %+v", ErrFormat, h)
	}
	return h, shared, nil
}

// tensorSpec is one weight group in file order: canonical name pattern
// ("%d" = layer; empty = skipped), rows × cols per layer, layered or not.
type tensorSpec struct {
	name      string
	rows, col int64
	layered   bool
}

func (h Header) layout(shared bool) []tensorSpec {
	d, f, v := int64(h.Dim), int64(h.HiddenDim), int64(h.VocabSize)
	hs := d / int64(h.NHeads)
	kv := int64(h.NKVHeads) * hs
	l := []tensorSpec{
		{"token_embd.weight", v, d, false},
		{"blk.%d.attn_norm.weight", 1, d, true},
		{"blk.%d.attn_q.weight", d, d, true},
		{"blk.%d.attn_k.weight", kv, d, true},
		{"blk.%d.attn_v.weight", kv, d, true},
		{"blk.%d.attn_output.weight", d, d, true},
		{"blk.%d.ffn_norm.weight", 1, d, true},
		{"blk.%d.ffn_gate.weight", f, d, true},
		{"blk.%d.ffn_down.weight", d, f, true},
		{"blk.%d.ffn_up.weight", f, d, true},
		{"output_norm.weight", 1, d, false},
		{"", int64(h.SeqLen), hs / 2, false}, // freq_cis_real
		{"", int64(h.SeqLen), hs / 2, false}, // freq_cis_imag
	}
	if !shared {
		l = append(l, tensorSpec{"output.weight", v, d, false})
	}
	return l
}

func (h Header) expectedSize(shared bool) int64 {
	n := int64(headerSize)
	for _, t := range h.layout(shared) {
		k := t.rows * t.col * 4
		if t.layered {
			k *= int64(h.NLayers)
		}
		n += k
	}
	return n
}

// Open maps a checkpoint.
func Open(path string) (*Checkpoint, error) {
	data, closer, err := fileio.Map(path)
	if err != nil {
		return nil, fmt.Errorf("llama2c: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		closer()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.Path, c.closer = path, closer
	return c, nil
}

// Parse reads a checkpoint held in memory; weights alias data.
func Parse(data []byte) (*Checkpoint, error) {
	h, shared, err := parseHeader(data)
	if err != nil {
		return nil, err
	}
	if want := h.expectedSize(shared); want != int64(len(data)) {
		return nil, fmt.Errorf("%w: %d bytes, the header %+v implies %d", ErrFormat, len(data), h, want)
	}
	c := &Checkpoint{Header: h, Shared: shared, Size: int64(len(data)), byName: map[string]*model.Weight{}}
	off := int64(headerSize)
	for _, t := range h.layout(shared) {
		n := int64(1)
		if t.layered {
			n = int64(h.NLayers)
		}
		for i := int64(0); i < n; i++ {
			size := t.rows * t.col * 4
			if t.name != "" {
				name := t.name
				if t.layered {
					name = fmt.Sprintf(t.name, i)
				}
				c.byName[name] = &model.Weight{Name: name, Type: ggml.F32, Cols: int(t.col), Rows: int(t.rows), Data: data[off : off+size]}
			}
			off += size
		}
	}
	return c, nil
}

// Config is the interpreter's hyperparameters (llama2.c: RMSNorm eps 1e-5,
// RoPE base 10000 over the whole head).
func (c *Checkpoint) Config() model.Config {
	h := c.Header
	hd := int(h.Dim / h.NHeads)
	return model.Config{
		Arch: "llama2.c", NVocab: int(h.VocabSize), NEmbd: int(h.Dim), NLayer: int(h.NLayers),
		NHead: int(h.NHeads), NHeadKV: int(h.NKVHeads), HeadDim: hd, HeadDimV: hd,
		NFF: int(h.HiddenDim), NCtxTrain: int(h.SeqLen), NRot: hd, RopeTheta: 10000,
		RopeFreqScale: 1, NormEps: 1e-5,
	}
}

// FindTokenizer returns the tokenizer.bin beside a checkpoint: a file
// named tokenizer.bin, else the only tok*.bin.
func FindTokenizer(checkpoint string) (string, error) {
	dir := filepath.Dir(checkpoint)
	if p := filepath.Join(dir, "tokenizer.bin"); fileExists(p) {
		return p, nil
	}
	m, _ := filepath.Glob(filepath.Join(dir, "tok*.bin"))
	if len(m) == 1 {
		return m[0], nil
	}
	return "", fmt.Errorf("llama2c: no tokenizer.bin beside %s (found %d tok*.bin)", checkpoint, len(m))
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
