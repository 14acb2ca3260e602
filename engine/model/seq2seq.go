package model

import (
	"errors"
	"fmt"
	"math"

	"flowchat/engine/parallel"
	"flowchat/engine/spec"
)

// Encoder-decoder networks: T5 (RMS norm, relative position bias from
// layer 0's attn_rel_b shared by every layer, no attention scaling, gated
// GELU) and the m2m100/Marian family (LayerNorm with biases, sinusoidal
// positions, scaled embeddings; Marian's layers are post-norm and its head
// has a bias, final_logits_bias, bound as output.bias). Canonical names
// follow GGUF's T5: enc.blk.{i}.*, dec.blk.{i}.* with cross_attn_* for
// attention over the encoder output, enc.output_norm, dec.output_norm,
// token_embd (shared), output.

// seqAttn is one attention block with its norm (before the block, or
// after the residual add in post-norm networks).
type seqAttn struct {
	Norm       *Norm
	Q, K, V, O Linear
}

type seqLayer struct {
	Self, Cross seqAttn // Cross only in the decoder
	FFNNorm     *Norm
	FFN         FFN
}

// seq2seq is the encoder-decoder part of a Model.
type seq2seq struct {
	enc, dec         []seqLayer
	encNorm, decNorm *Norm
	encRel, decRel   *Weight // [n_head cols, buckets rows]; nil without relative bias
	// posEmbd writes the sinusoidal position row [d] of a position; nil
	// without sinusoidal positions.
	posEmbd  func(dst []float32, pos int)
	postNorm bool    // norms follow the residual adds (Marian, spec post_norm)
	outScale float32 // tied T5 heads scale by d^-0.5
}

func buildSeq2Seq(s *spec.Spec, c Config, src Source, opt Options) (*Model, error) {
	m := &Model{Config: c, Spec: s, causal: true}
	b := &binder{src: src}
	emb, ok := src.Weight("token_embd.weight")
	if !ok || emb.Cols != c.NEmbd {
		return nil, fmt.Errorf("model %s: no token_embd.weight of width %d", c.Arch, c.NEmbd)
	}
	m.TokEmbd, m.NVocab = emb, emb.Rows
	m.glu = isGLU(s.Network.Activation)
	rms := s.Network.Normalization == "rms"
	sq := &seq2seq{posEmbd: sinusoidFor(&s.Network), postNorm: s.Network.PostNorm, outScale: 1}
	sq.enc = b.seqLayers("enc.blk.", c, rms, m.glu, false)
	sq.dec = b.seqLayers("dec.blk.", c, rms, m.glu, true)
	sq.encNorm = b.norm("enc.output_norm", c.NEmbd, rms, false, c.NormEps)
	sq.decNorm = b.norm("dec.output_norm", c.NEmbd, rms, false, c.NormEps)
	sq.encRel = b.optMatrix("enc.blk.0.attn_rel_b.weight", c.NHead, -1)
	sq.decRel = b.optMatrix("dec.blk.0.attn_rel_b.weight", c.NHead, -1)
	if m.Output = b.optLinear("output", c.NEmbd, m.NVocab); m.Output.W == nil {
		m.Output.W = emb
		// A tied head may still have its own bias (Marian's final_logits_bias).
		m.Output.B = b.vector("output.bias", m.NVocab)
		if rms { // T5 rescales the tied head's input by d_model^-0.5
			sq.outScale = float32(1 / math.Sqrt(float64(c.NEmbd)))
		}
	}
	if b.err == nil && (len(sq.enc) == 0 || len(sq.dec) == 0) {
		b.fail("no enc.blk.0 or dec.blk.0 tensors")
	}
	if b.err != nil {
		return nil, fmt.Errorf("model %s (spec %s): %w", c.Arch, s.Family, b.err)
	}
	m.seq = sq
	m.configure()
	m.pool = parallel.New(max(opt.Threads, 1))
	return m, nil
}

// seqLayers binds prefix{i}.* for i = 0, 1, … while layer i exists.
func (b *binder) seqLayers(prefix string, c Config, rms, glu, cross bool) []seqLayer {
	var out []seqLayer
	for i := 0; ; i++ {
		p := fmt.Sprintf("%s%d.", prefix, i)
		if _, ok := b.src.Weight(p + "attn_q.weight"); !ok {
			return out
		}
		norm := func(name string) *Norm { return b.norm(p+name, c.NEmbd, rms, false, c.NormEps) }
		l := seqLayer{Self: b.seqAttn(p+"attn_", c), FFNNorm: norm("ffn_norm"), FFN: b.ffn(p, c, glu)}
		l.Self.Norm = norm("attn_norm")
		if cross {
			l.Cross = b.seqAttn(p+"cross_attn_", c)
			l.Cross.Norm = norm("cross_attn_norm")
		}
		out = append(out, l)
	}
}

func (b *binder) seqAttn(p string, c Config) seqAttn {
	out := p + "o"
	if _, ok := b.src.Weight(p + "output.weight"); ok {
		out = p + "output"
	}
	return seqAttn{
		Q: b.linear(p+"q", c.NEmbd, c.qDim()), K: b.linear(p+"k", c.NEmbd, c.kvDim()),
		V: b.linear(p+"v", c.NEmbd, c.vDim()), O: b.linear(out, c.NHead*c.HeadDimV, c.NEmbd),
	}
}

// IsEncoderDecoder reports whether the network is encoder-decoder.
func (m *Model) IsEncoderDecoder() bool { return m.seq != nil }

// relBucket is llama.cpp's llama_relative_position_bucket for key position
// key and query position query (T5's bucketing with max distance maxDist).
func relBucket(key, query, nBuckets, maxDist int, bidirectional bool) int {
	if bidirectional {
		nBuckets >>= 1
	}
	maxExact := nBuckets >> 1
	rel := key - query
	bucket := 0
	if bidirectional {
		if rel > 0 {
			bucket += nBuckets
		}
		rel = absInt(rel)
	} else {
		rel = -min(rel, 0)
	}
	if rel < maxExact {
		return bucket + rel
	}
	large := int(float32(maxExact) + float32(math.Log(float64(float32(rel)/float32(maxExact))))*float32(nBuckets-maxExact)/float32(math.Log(float64(float32(maxDist)/float32(maxExact)))))
	return bucket + min(large, nBuckets-1)
}

// sinusoidFor picks the spec's sinusoidal position convention.
func sinusoidFor(n *spec.Network) func([]float32, int) {
	switch {
	case n.PositionEmbedding != "sinusoidal":
		return nil
	case n.SinusoidalStyle == "marian":
		return sinusoidMarian
	}
	return sinusoid
}

// sinusoid writes the m2m100/fairseq sinusoidal embedding of position pos
// (offset by the padding index + 1 = 2): sin in the first half, cos in the
// second, frequencies 10000^(-i/(d/2-1)).
func sinusoid(dst []float32, pos int) {
	half := len(dst) / 2
	p := float64(pos + 2)
	step := math.Log(10000) / float64(half-1)
	for i := 0; i < half; i++ {
		a := p * math.Exp(-float64(i)*step)
		dst[i] = float32(math.Sin(a))
		dst[half+i] = float32(math.Cos(a))
	}
}

// sinusoidMarian writes Marian's sinusoidal embedding of position pos (no
// offset): for i < d/2, angle = pos / 10000^(2i/d), sin at i and cos at
// d/2+i (MarianSinusoidalPositionalEmbedding; an odd d has one more sin).
func sinusoidMarian(dst []float32, pos int) {
	d := len(dst)
	nSin := (d + 1) / 2
	for k := 0; k < nSin; k++ {
		a := float64(pos) / math.Pow(10000, float64(2*k)/float64(d))
		dst[k] = float32(math.Sin(a))
		if nSin+k < d {
			dst[nSin+k] = float32(math.Cos(a))
		}
	}
}

// errSeqAll is returned when every row's logits are asked of an
// encoder-decoder model (only the decoder's rows exist).
var errSeqAll = errors.New("model: encoder-decoder networks give logits for decoder tokens only")
