package model

import (
	"fmt"
	"math"
	"runtime"

	"flowchat/engine/device"
	"flowchat/engine/ggml"
)

// The device attention's fast paths (device.Attention): a segment of
// several rows (a prompt chunk, or a draft being verified) or a prompt
// segment (Segment.Prompt) attends in one tiled launch, and a decode row over at least devSplitMinKeys keys is
// split over chunks of keys with FlashDecoding++'s unified max, φ kept per
// sequence, layer and head on the device as the CPU engine keeps it
// (attn_split.go: the same window, the same fallback to the exact-max
// softmax, a head's first split step cold). Both read the keys of
// positions [0, n) as consecutive rows: the cache itself, or the rows
// gathered from paged blocks (devKeys). Devices without device.Attention,
// and heads wider than device.PrefillMaxHeadDim (prompts), keep one
// decode launch per row.
//
// Neither path changes with batching: a prompt row's result depends only
// on its own keys (the prefill kernel's key tiles start at 0 for every
// row, masked keys add exact zeros), so a prompt in chunks gives the bits
// of the prompt in one batch, as before, as long as a one-token chunk is
// marked Prompt (State.Forward's is not: like the CPU engine's split, it
// is then a decode row); φ moves only on decode steps.
// A fork takes its sequence's φ (forkDevPhi), as Fork copies the host's.

// devSplitMinKeys is where decode rows start taking AttnSplit; tests lower
// it to run the split path on short contexts.
var devSplitMinKeys = device.SplitMinKeys

// devScratch is a device's attention scratch in floats for nh heads and
// nCtx keys: the per-row decode's scores, or the split's.
func devScratch(nh, nCtx, hd int) int {
	return max(nh*nCtx, device.SplitScratch(nh, nCtx, hd))
}

// devPhi is a sequence's unified maxima on each device: [NLayer × NHead]
// floats per device (shard si of a layer at its first head), NaN until a
// head's first split step.
type devPhi struct {
	m   []device.Mem
	mem *memList
}

// devAttendFast runs segment g's attention for shard si through the
// device's Attention kernels where they apply, and reports whether it did.
func (s *State) devAttendFast(l, si int, b *devBufs, kv *devKV, kc, vc device.Mem, g *Segment, j0, j1, r0 int, q, out device.Mem) (bool, error) {
	m := s.m
	sh := &m.off.w[l].shards[si]
	d := m.off.Devices[sh.Device]
	att, ok := d.(device.Attention)
	// The segment's tokens [j0, j1) are in this pass's rows (a pipeline's
	// micro-batch may hold part of a segment: the tiled kernel's rows do
	// not depend on the rows beside them, so a cut changes no bit).
	T, n := j1-j0, g.Seq.pos+j1
	prefill := len(g.Tokens) > 1 || g.Prompt // a one-token prompt chunk too: chunking changes no bit
	switch {
	case T <= 0:
		return true, nil
	case !ok, !prefill && n < devSplitMinKeys, prefill && m.HeadDim > device.PrefillMaxHeadDim:
		return false, nil
	}
	kd, qd := sh.kvDim(m.HeadDim), sh.qDim(m.HeadDim)
	kr, vr, err := s.devKeys(g.Seq, kv, kc, vc, sh.Device, kd, b, n)
	if err != nil {
		return true, err
	}
	row := g.row0 + j0 - r0
	qs, os := q.Floats(row*qd, T*qd), out.Floats(row*qd, T*qd)
	if prefill {
		return true, att.AttnPrefill(kv.t, qs, kr, vr, os, T, g.Seq.pos+j0, m.HeadDim, sh.nHead, sh.nKV, kd, m.attnScale)
	}
	phi, err := g.Seq.devPhi(l, si)
	if err != nil {
		return true, err
	}
	scratch := b.scratch.Floats(0, device.SplitScratch(sh.nHead, n, m.HeadDim))
	return true, att.AttnSplit(kv.t, qs, kr, vr, phi, scratch, os, n, m.HeadDim, sh.nHead, sh.nKV, kd, m.attnScale)
}

// devPhi returns the φ of shard si of layer l (its heads' floats) on the
// shard's device, allocating the sequence's φ there (NaN) first.
func (s *State) devPhi(l, si int) (device.Mem, error) {
	m := s.m
	shards := m.off.w[l].shards
	all, err := s.devPhiOn(shards[si].Device)
	if err != nil {
		return device.Mem{}, err
	}
	h0 := l * m.NHead
	for _, sh := range shards[:si] {
		h0 += sh.nHead
	}
	return all.Floats(h0, shards[si].nHead), nil
}

// devPhiOn returns the sequence's whole φ on device di, allocating it
// there (NaN) first.
func (s *State) devPhiOn(di int) (device.Mem, error) {
	m, o := s.m, s.m.off
	if s.dphi == nil || len(s.dphi.m) != len(o.Devices) {
		s.dphi = &devPhi{m: make([]device.Mem, len(o.Devices)), mem: &memList{devs: o.Devices}}
		runtime.AddCleanup(s, (*memList).free, s.dphi.mem)
	}
	if s.dphi.m[di].Bytes() == 0 {
		nan := make([]float32, m.NLayer*m.NHead)
		for i := range nan {
			nan[i] = float32(math.NaN())
		}
		p, err := devAlloc(o, s.dphi.mem, di, 4*len(nan))
		if err == nil {
			err = o.Devices[di].Write(p, ggml.F32Bytes(nan))
		}
		if err != nil {
			return device.Mem{}, err
		}
		s.dphi.m[di] = p
	}
	return s.dphi.m[di], nil
}

// forkDevPhi gives the fork f the φ of its sequence s on every device
// where s has one; a failure is the placement's error (as copyDevRows).
func (f *State) forkDevPhi(s *State) {
	o := s.m.off
	if s.dphi == nil || o == nil || len(s.dphi.m) != len(o.Devices) {
		return
	}
	for di, p := range s.dphi.m {
		if p.Bytes() == 0 {
			continue
		}
		_, err := f.devPhiOn(di) // allocated NaN, then overwritten

		if err == nil {
			err = o.Devices[di].Copy(f.dphi.m[di], p)
		}
		if err != nil && o.err == nil {
			o.err = fmt.Errorf("copying φ on %s: %w", o.Devices[di].Name(), err)
		}
	}
}
