package model

import (
	"fmt"

	"flowchat/engine/ggml"
)

// Norm is RMSNorm or LayerNorm with an optional gain W (times (1+W) when
// baseOne) and bias B.
type Norm struct {
	W, B    []float32
	Eps     float32
	RMS     bool
	BaseOne bool
}

// Forward normalizes one row x into dst.
func (n *Norm) Forward(dst, x []float32) {
	if n.RMS && n.W != nil && !n.BaseOne && n.B == nil && len(n.W) == len(x) {
		// The common case in one pass, with the same two roundings.
		ggml.ScaleMul(dst[:len(x)], x, rmsScale(x, n.Eps), n.W)
		return
	}
	if n.RMS {
		rmsNorm(dst, x, n.Eps)
	} else {
		layerNorm(dst, x, n.Eps)
	}
	switch {
	case n.W != nil && n.BaseOne:
		for i, w := range n.W {
			dst[i] *= 1 + w
		}
	case n.W != nil:
		for i, w := range n.W {
			dst[i] *= w
		}
	}
	if n.B != nil {
		add(dst, n.B)
	}
}

// Linear is y = W x + B.
type Linear struct {
	W *Weight
	B []float32
}

// Attention is multi-head attention with grouped K/V heads (MHA, GQA, MQA),
// either from separate Q, K, V projections or from one fused [Q;K;V].
type Attention struct {
	Q, K, V, QKV, O Linear
	QNorm, KNorm    *Norm // per-head norms (optional)
}

// FFN is a feed-forward block: down(act(gate) * up) for GLU variants
// (gate fused as the first half of up's rows when Gate is absent), or
// down(act(up)).
type FFN struct {
	Gate, Up, Down Linear
	FusedGate      bool
}

// Layer is one transformer block.
type Layer struct {
	AttnNorm, FFNNorm         *Norm
	PostAttnNorm, PostFFNNorm *Norm // applied to the block outputs (Gemma 2)
	AttnOutNorm, OutNorm      *Norm // post-LN blocks (BERT)
	Attn                      Attention
	FFN                       FFN
}

func (b *binder) norm(name string, n int, rms, baseOne bool, eps float32) *Norm {
	w := b.vector(name+".weight", n)
	if w == nil {
		return nil
	}
	return &Norm{W: w, B: b.vector(name+".bias", n), Eps: eps, RMS: rms, BaseOne: baseOne}
}

func (b *binder) linear(name string, cols, rows int) Linear {
	return Linear{W: b.matrix(name+".weight", cols, rows), B: b.vector(name+".bias", rows)}
}

func (b *binder) optLinear(name string, cols, rows int) Linear {
	w := b.optMatrix(name+".weight", cols, rows)
	if w == nil {
		return Linear{}
	}
	return Linear{W: w, B: b.vector(name+".bias", rows)}
}

func (b *binder) attention(p string, c Config) Attention {
	var a Attention
	qkvRows := c.qDim() + c.kvDim() + c.vDim()
	if a.QKV = b.optLinear(p+"attn_qkv", c.NEmbd, qkvRows); a.QKV.W == nil {
		a.Q = b.linear(p+"attn_q", c.NEmbd, c.qDim())
		a.K = b.linear(p+"attn_k", c.NEmbd, c.kvDim())
		a.V = b.linear(p+"attn_v", c.NEmbd, c.vDim())
	}
	a.O = b.linear(p+"attn_output", c.NHead*c.HeadDimV, c.NEmbd)
	return a
}

func (b *binder) ffn(p string, c Config, glu bool) FFN {
	var f FFN
	down, ok := b.src.Weight(p + "ffn_down.weight")
	if !ok {
		b.fail("model file lacks tensor %sffn_down.weight", p)
		return f
	}
	nff := down.Cols
	f.Down = b.linear(p+"ffn_down", nff, c.NEmbd)
	f.Gate = b.optLinear(p+"ffn_gate", c.NEmbd, nff)
	switch {
	case glu && f.Gate.W == nil:
		f.Up = b.linear(p+"ffn_up", c.NEmbd, 2*nff)
		f.FusedGate = true
	case !glu && f.Gate.W != nil:
		b.fail("%sffn_gate present but the spec's activation is not a GLU variant", p)
	default:
		f.Up = b.linear(p+"ffn_up", c.NEmbd, nff)
	}
	return f
}

func (f *FFN) width() int { return f.Down.W.Cols }

func (b *binder) layer(i int, c Config, rms, baseOne, glu bool) Layer {
	p := fmt.Sprintf("blk.%d.", i)
	norm := func(name string) *Norm { return b.norm(p+name, c.NEmbd, rms, baseOne, c.NormEps) }
	l := Layer{
		AttnNorm:     norm("attn_norm"),
		FFNNorm:      norm("ffn_norm"),
		PostAttnNorm: norm("post_attention_norm"),
		PostFFNNorm:  norm("post_ffw_norm"),
		AttnOutNorm:  norm("attn_output_norm"),
		OutNorm:      norm("layer_output_norm"),
		Attn:         b.attention(p, c),
		FFN:          b.ffn(p, c, glu),
	}
	l.Attn.QNorm = b.norm(p+"attn_q_norm", c.HeadDim, rms, baseOne, c.NormEps)
	l.Attn.KNorm = b.norm(p+"attn_k_norm", c.HeadDim, rms, baseOne, c.NormEps)
	return l
}
