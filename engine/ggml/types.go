// Package ggml defines the tensor element types of the GGML/GGUF family
// (F32, F16, BF16, the legacy block quants, the K-quants and IQ4_NL): their
// block layouts, dequantization, activation quantization and dot-product
// kernels against quantized activations.
//
// Every kernel has a plain-Go twin (the reference, always compiled) and, where
// it matters for speed, an AVX2 assembly version selected at run time; the
// `noasm` build tag forces the plain-Go versions.
//
// On CPUs with Intel AMX (Sapphire Rapids and newer Xeons) and Linux
// granting the tile state, an AMX tier holds Q4_0 and Q8_0 matrices in a
// tile layout of 16 rows (b16.go; the engine rewrites them at load) and
// runs batches of 8 (Q4_0) or 4 (Q8_0) or more columns as TDPBSSD tiles
// scaled in AVX-512, smaller ones as VPDPBUSD over the same bytes, both with one
// rounding (block sums), so a sequence's logits stay batch-invariant
// (amx.go, amx_amd64.s, b16_amd64.s). FLOWCHAT_AMX=0 turns it off;
// AMXStatus says whether it is on and why not. On every CPU with AVX-512
// BW and VNNI, AMX or not, Q4_K, Q5_K and Q6_K matrices take tile layouts
// of 16 rows of their own (k16.go, k16q5.go, k16q6.go), read by VPDPBUSD
// with one rounding for prompts and decode; FLOWCHAT_KTILE=0 keeps them
// row-major. Where the AMX tier does not run, Q4_0 and Q8_0 matrices
// still take its tile layout, read with the same rounding by AVX-512
// VNNI, AVX-VNNI or AVX2 kernels (r16_amd64.go; FLOWCHAT_QTILE=0 keeps
// the 4-row interleave), and Kernels names what is installed.
package ggml

import "fmt"

// Type is a GGML tensor element type; the values are the on-disk ids used by
// GGUF (ggml_type in ggml.h).
type Type uint32

const (
	F32    Type = 0
	F16    Type = 1
	Q4_0   Type = 2
	Q4_1   Type = 3
	Q5_0   Type = 6
	Q5_1   Type = 7
	Q8_0   Type = 8
	Q8_1   Type = 9
	Q2_K   Type = 10
	Q3_K   Type = 11
	Q4_K   Type = 12
	Q5_K   Type = 13
	Q6_K   Type = 14
	Q8_K   Type = 15
	IQ4_NL Type = 20
	BF16   Type = 30
)

// QK_K is the super-block size of the K-quants.
const QK_K = 256

type traits struct {
	name      string
	blockSize int // elements per block
	typeSize  int // bytes per block
}

var typeTraits = map[Type]traits{
	F32:    {"F32", 1, 4},
	F16:    {"F16", 1, 2},
	BF16:   {"BF16", 1, 2},
	Q4_0:   {"Q4_0", 32, 2 + 16},
	Q4_1:   {"Q4_1", 32, 2 + 2 + 16},
	Q5_0:   {"Q5_0", 32, 2 + 4 + 16},
	Q5_1:   {"Q5_1", 32, 2 + 2 + 4 + 16},
	Q8_0:   {"Q8_0", 32, 2 + 32},
	Q8_1:   {"Q8_1", 32, 4 + 32},
	Q2_K:   {"Q2_K", QK_K, QK_K/16 + QK_K/4 + 2 + 2},
	Q3_K:   {"Q3_K", QK_K, QK_K/8 + QK_K/4 + 12 + 2},
	Q4_K:   {"Q4_K", QK_K, 2 + 2 + 12 + QK_K/2},
	Q5_K:   {"Q5_K", QK_K, 2 + 2 + 12 + QK_K/8 + QK_K/2},
	Q6_K:   {"Q6_K", QK_K, QK_K/2 + QK_K/4 + QK_K/16 + 2},
	Q8_K:   {"Q8_K", QK_K, 4 + QK_K + QK_K/16*2},
	IQ4_NL: {"IQ4_NL", 32, 2 + 16},
}

// Known reports whether t is a type this package implements.
func (t Type) Known() bool {
	if t < Type(len(geometry)) && geometry[t][0] != 0 { // no map lookup on the hot paths
		return true
	}
	_, ok := typeTraits[t]
	return ok
}

func (t Type) String() string {
	if tr, ok := typeTraits[t]; ok {
		return tr.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// BlockSize is the number of elements per block (1 for float types).
func (t Type) BlockSize() int {
	if t < Type(len(geometry)) && geometry[t][0] != 0 {
		return int(geometry[t][0])
	}
	return typeTraits[t].blockSize
}

// TypeSize is the number of bytes per block.
func (t Type) TypeSize() int {
	if t < Type(len(geometry)) && geometry[t][0] != 0 {
		return int(geometry[t][1])
	}
	return typeTraits[t].typeSize
}

// geometry caches (block size, type size) of GGML's own types: row sizes
// are computed per matrix chunk in the forward pass, where a map lookup
// each time cost measurable decode speed.
var geometry = func() (g [40][2]uint16) {
	for t, tr := range typeTraits {
		if int(t) < len(g) {
			g[t] = [2]uint16{uint16(tr.blockSize), uint16(tr.typeSize)}
		}
	}
	return g
}()

// RowSize is the number of bytes of n elements; n must be a multiple of
// BlockSize.
func (t Type) RowSize(n int) int { return n / t.BlockSize() * t.TypeSize() }

// IsQuantized reports whether t is a block-quantized type.
func (t Type) IsQuantized() bool { return t.BlockSize() > 1 }

// ParseType maps a type name ("Q4_K", "f16", …) to its Type.
func ParseType(name string) (Type, bool) {
	for t, tr := range typeTraits {
		if equalFold(tr.name, name) {
			return t, true
		}
	}
	return 0, false
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
