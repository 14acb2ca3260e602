// Package quant implements Inferflow's block min–max quantization family:
// per block of weights w, with lo = min(w), hi = max(w) and L levels,
//
//	d = (hi − lo)/(L − 1),   q = round((w − lo)/d),   w' = q·d + lo
//
// with lo and d stored as fp16. The levels are Q8 (B32, B64), Q6 B64,
// Q5 B64, Q4 B32 and B64, Q3H (3.5-bit: 11 levels, two adjacent weights
// packed as one 7-bit code q₂ᵢ·11 + q₂ᵢ₊₁, B64), Q3 B32 and Q2 B32.
//
// Every format has a bit-exact plain-Go reference (quantize, dequantize)
// and dot kernels against Q8_0 activations (ggml's activation format): a
// plain-Go twin, always compiled and the reference in tests, and AVX2
// assembly selected at run time on amd64 (the noasm tag forces Go).
//
// The formats carry GGUF tensor type ids from 1000 up, far from GGML's, so
// a reader that does not know them rejects the file instead of misreading
// it; docs/QUANTIZATION.md documents the block layouts.
package quant

import (
	"fmt"
	"strings"

	"flowchat/engine/ggml"
)

// The GGUF tensor type ids of the Inferflow formats.
const (
	Q8_B32  ggml.Type = 1000
	Q8_B64  ggml.Type = 1001
	Q6_B64  ggml.Type = 1002
	Q5_B64  ggml.Type = 1003
	Q4_B32  ggml.Type = 1004
	Q4_B64  ggml.Type = 1005
	Q3H_B64 ggml.Type = 1006
	Q3_B32  ggml.Type = 1007
	Q2_B32  ggml.Type = 1008
)

// headerSize is the bytes before a block's codes: lo then d, both fp16.
const headerSize = 4

// plane is one bit field of the codes, packed so that AVX2 can unpack 32
// codes with a broadcast, a per-lane variable shift and a mask: with
// n = codes·width/8 bytes, byte j holds codes j, j+n, j+2n, … at bit
// offsets 0, width, 2·width, …; each field is (code >> shift) & (2^width−1).
type plane struct{ shift, width uint }

// Format describes one block format.
type Format struct {
	Type   ggml.Type
	Name   string // e.g. "Q3H_B64"
	Alias  string // short name for the default block size, e.g. "Q3H"
	Levels int    // quantization levels per weight (Q3H: 11)
	Block  int    // weights per block
	Size   int    // bytes per block
	pairs  bool   // Q3H: codes are pairs q₂ᵢ·11 + q₂ᵢ₊₁
	planes []plane
}

// BitsPerWeight is the storage cost per weight, header included.
func (f *Format) BitsPerWeight() float64 { return float64(8*f.Size) / float64(f.Block) }

// codes is the number of packed codes per block.
func (f *Format) codes() int {
	if f.pairs {
		return f.Block / 2
	}
	return f.Block
}

// RowSize is the bytes of n weights; n must be a multiple of Block.
func (f *Format) RowSize(n int) int { return n / f.Block * f.Size }

func (f *Format) String() string { return f.Name }

func newFormat(t ggml.Type, name, alias string, levels, block int, pairs bool, planes ...plane) *Format {
	f := &Format{Type: t, Name: name, Alias: alias, Levels: levels, Block: block, pairs: pairs, planes: planes}
	f.Size = headerSize
	for _, p := range planes {
		f.Size += f.codes() * int(p.width) / 8
	}
	return f
}

// Formats lists every level, from the most to the least precise.
var Formats = []*Format{
	newFormat(Q8_B32, "Q8_B32", "Q8", 256, 32, false, plane{0, 8}),
	newFormat(Q8_B64, "Q8_B64", "", 256, 64, false, plane{0, 8}),
	newFormat(Q6_B64, "Q6_B64", "Q6", 64, 64, false, plane{0, 4}, plane{4, 2}),
	newFormat(Q5_B64, "Q5_B64", "Q5", 32, 64, false, plane{0, 4}, plane{4, 1}),
	newFormat(Q4_B32, "Q4_B32", "Q4", 16, 32, false, plane{0, 4}),
	newFormat(Q4_B64, "Q4_B64", "", 16, 64, false, plane{0, 4}),
	newFormat(Q3H_B64, "Q3H_B64", "Q3H", 11, 64, true, plane{0, 4}, plane{4, 2}, plane{6, 1}),
	newFormat(Q3_B32, "Q3_B32", "Q3", 8, 32, false, plane{0, 2}, plane{2, 1}),
	newFormat(Q2_B32, "Q2_B32", "Q2", 4, 32, false, plane{0, 2}),
}

var byType = func() map[ggml.Type]*Format {
	m := map[ggml.Type]*Format{}
	for _, f := range Formats {
		m[f.Type] = f
	}
	return m
}()

// ForType returns the format with GGUF type id t, or nil.
func ForType(t ggml.Type) *Format { return byType[t] }

// Parse finds a format by name or alias, case-insensitively ("q3h",
// "Q4_B64", "Q8").
func Parse(name string) (*Format, error) {
	for _, f := range Formats {
		if strings.EqualFold(name, f.Name) || (f.Alias != "" && strings.EqualFold(name, f.Alias)) {
			return f, nil
		}
	}
	return nil, fmt.Errorf("quant: unknown Inferflow format %q (want one of %s)", name, Names())
}

// Names lists the format names, comma-separated.
func Names() string {
	s := make([]string, len(Formats))
	for i, f := range Formats {
		s[i] = f.Name
	}
	return strings.Join(s, ", ")
}
