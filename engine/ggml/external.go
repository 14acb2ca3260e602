package ggml

import "fmt"

// ExternalType is a tensor type implemented outside this package (the
// Inferflow block formats of engine/quant): its block geometry, its codec
// and its kernels, which take activations of VecDotType.
type ExternalType struct {
	Name       string
	BlockSize  int  // elements per block
	TypeSize   int  // bytes per block
	VecDotType Type // the activation type Dot and MatVec take
	Dequantize func(blk []byte, y []float32)
	Quantize   func(x []float32, blk []byte)
	Dot        func(n int, w, x []byte) float32
	MatVec     func(n int, w, x []byte, dst []float32)
}

// external holds the registered types; written only from init functions.
var external = map[Type]*ExternalType{}

// RegisterType makes t known to every function of this package (and so to
// the GGUF reader and writer and the forward pass). Call it from an init
// function; ids below 1000 are GGML's and are refused.
func RegisterType(t Type, e ExternalType) {
	if t < 1000 || t.Known() {
		panic(fmt.Sprintf("ggml: cannot register type %d (%s): reserved or taken", uint32(t), e.Name))
	}
	typeTraits[t] = traits{e.Name, e.BlockSize, e.TypeSize}
	dequantizers[t] = e.Dequantize
	refQuantizers[t] = e.Quantize
	external[t] = &e
}
