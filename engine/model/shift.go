package model

import (
	"fmt"

	"flowchat/engine/ggml"
)

// Context shift (StreamingLLM; llama.cpp's context shift): when a
// sequence's context is full, keep its first keep positions (the
// "attention sink" tokens the model attends to whatever the text), drop
// the discard positions after them, and move the rest down. Values move
// as they are; keys were rotated for their old positions, so each is
// rotated again by −discard (RoPE composes: rotating by θ·p then by θ·δ is
// rotating by θ·(p+δ), up to float32 rounding, which is what llama.cpp's
// K-shift does too). ALiBi's biases come from positions at attention
// time, so its keys move unchanged. Learned absolute positions are part of
// the keys in no separable way: such networks cannot shift.

// CanShift reports whether the network's keys can be moved to new
// positions.
func (m *Model) CanShift() bool {
	// Keys on a device would need a RoPE re-rotation kernel: not yet.
	return m.seq == nil && m.causal && m.PosEmbd == nil && !m.sinusoidal && m.off == nil
}

// Shift drops positions [keep, keep+discard) of a pool sequence and moves
// the later ones down by discard. The prefix cache's entries for the
// blocks it rewrites are dropped, and blocks shared with other sequences
// are copied first.
func (s *State) Shift(keep, discard int) error {
	switch {
	case s.kvp == nil:
		return fmt.Errorf("model: only pool sequences shift")
	case !s.m.CanShift():
		return fmt.Errorf("model: %s networks with learned or sinusoidal positions cannot shift their context", s.m.Arch)
	case keep < 0 || discard <= 0 || keep+discard > s.pos:
		return fmt.Errorf("model: shift keep %d, discard %d of %d positions", keep, discard, s.pos)
	}
	p, b := s.kvp, s.kvp.blockTokens
	for lb := keep / b; lb < len(s.table); lb++ {
		if !p.writable(s.table[lb]) {
			if p.Available() == 0 {
				return ErrNoKVBlocks
			}
			s.copyBlock(lb)
		}
		p.prefix.forget(s.table[lb])
	}
	var rot ropeTable
	if s.m.useRope {
		half := s.m.NRot / 2
		rot = ropeTable{cos: make([]float32, half), sin: make([]float32, half)}
		rot.fill(-discard, s.m.RopeTheta, s.m.RopeFreqScale)
	}
	buf := make([]float32, max(s.m.kvDim(), s.m.vDim()))
	for j := keep + discard; j < s.pos; j++ {
		s.moveRow(s.row(j-discard), s.row(j), &rot, buf)
	}
	s.truncatePaged(s.pos - discard)
	s.hashes = s.hashes[:min(len(s.hashes), keep/b)]
	return nil
}

// moveRow copies storage row src to dst in every layer, rotating the keys.
func (s *State) moveRow(dst, src int, rot *ropeTable, buf []float32) {
	m := s.m
	kd, vd := m.kvDim(), m.vDim()
	for l := range m.Layers {
		if s.kv == nil {
			k := s.kCache[l][dst*kd : (dst+1)*kd]
			copy(k, s.kCache[l][src*kd:(src+1)*kd])
			copy(s.vCache[l][dst*vd:(dst+1)*vd], s.vCache[l][src*vd:(src+1)*vd])
			s.rotateKey(k, rot)
			continue
		}
		q := s.kv
		k := buf[:kd]
		decodeSlice(q.typ, q.k[l][src*q.kRow:(src+1)*q.kRow], 0, k)
		s.rotateKey(k, rot)
		ggml.QuantizeActivation(q.typ, k, q.k[l][dst*q.kRow:(dst+1)*q.kRow])
		copy(q.v[l][dst*q.vRow:(dst+1)*q.vRow], q.v[l][src*q.vRow:(src+1)*q.vRow])
	}
}

// rotateKey rotates every head of one key row by rot (no-op without RoPE).
func (s *State) rotateKey(k []float32, rot *ropeTable) {
	if !s.m.useRope {
		return
	}
	hd := s.m.HeadDim
	for h := 0; h < s.m.NHeadKV; h++ {
		rope(k[h*hd:h*hd+s.m.NRot], rot, s.m.ropeHalf)
	}
}
