package quant

import "flowchat/engine/ggml"

// The Inferflow formats become tensor types of ggml, so that GGUF files
// holding them load and run like any other.
func init() {
	for _, f := range Formats {
		ggml.RegisterType(f.Type, ggml.ExternalType{
			Name: f.Name, BlockSize: f.Block, TypeSize: f.Size, VecDotType: ActType,
			Dequantize: f.DequantizeBlock, Quantize: f.QuantizeBlock,
			Dot: f.Dot, MatVec: f.MatVec,
		})
	}
}
