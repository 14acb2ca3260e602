package model

import (
	"fmt"
	"runtime"
	"unsafe"

	"flowchat/engine/device"
	"flowchat/engine/ggml"
)

// devState is a State's buffers on the devices of the model's placement:
// one devBufs per device, allocated at the first forward pass that uses
// the device and freed when the State is collected.
type devState struct {
	b   []*devBufs
	loc int // where the batch's activations x are: -1 host, else a device
}

// devBufs are one device's activations for batches of up to maxBatch rows
// (shapes as the State's host buffers) and its attention scratch.
type devBufs struct {
	x, xn, tmp, q, k, v, out, gate, up device.Mem
	pos                                device.Mem // [maxBatch] int32 positions
	scratch                            device.Mem // [nHead × nCtx] attention scores
	kg, vg                             device.Mem // [nCtx × kvDim] keys gathered from paged blocks
	logits                             device.Mem // [rows × nVocab], grown on demand
	posValid                           bool       // pos holds this pass's positions
}

// devKV is a KV cache's device half: per block on a device, K and V for
// every storage row of the cache (a State's nCtx rows, or a KVPool's
// blocks·blockTokens), indexed like the host cache.
type devKV struct {
	k, v []device.Mem // per layer; zero for host blocks
}

// memList frees device memory; a cleanup owns one so that it does not
// keep the State or pool reachable.
type memList struct {
	devs []device.Device
	mems [][]device.Mem
}

func (l *memList) add(di int, m device.Mem) {
	for len(l.mems) <= di {
		l.mems = append(l.mems, nil)
	}
	l.mems[di] = append(l.mems[di], m)
}

func (l *memList) free() {
	for di, ms := range l.mems {
		for _, m := range ms {
			l.devs[di].Free(m)
		}
	}
	l.mems = nil
}

// devAlloc allocates on device di and records the allocation in l.
func devAlloc(o *offload, l *memList, di, bytes int) (device.Mem, error) {
	m, err := o.Devices[di].Alloc(bytes)
	if err == nil {
		l.add(di, m)
	}
	return m, err
}

// devBuffers returns s's buffers on device di, allocating them first.
func (s *State) devBuffers(di int) (*devBufs, error) {
	o := s.m.off
	if s.dev == nil || len(s.dev.b) != len(o.Devices) {
		s.dev = &devState{b: make([]*devBufs, len(o.Devices)), loc: -1}
		s.devMem = &memList{devs: o.Devices}
		runtime.AddCleanup(s, (*memList).free, s.devMem)
	}
	if b := s.dev.b[di]; b != nil {
		return b, nil
	}
	c, T := s.m.Config, s.maxBatch
	nff := 0
	for l, d := range o.Layer {
		if d == di {
			nff = max(nff, s.m.Layers[l].FFN.width())
		}
	}
	b := &devBufs{}
	for _, a := range []struct {
		m *device.Mem
		n int // floats
	}{
		{&b.x, T * c.NEmbd}, {&b.xn, T * c.NEmbd}, {&b.tmp, T * c.NEmbd}, {&b.q, T * c.qDim()},
		{&b.k, T * c.kvDim()}, {&b.v, T * c.vDim()}, {&b.out, T * c.NHead * c.HeadDimV},
		{&b.gate, T * nff}, {&b.up, T * nff}, {&b.pos, T}, {&b.scratch, c.NHead * s.nCtx},
	} {
		var err error
		if *a.m, err = devAlloc(o, s.devMem, di, 4*a.n); err != nil {
			return nil, err
		}
	}
	s.dev.b[di] = b
	return b, nil
}

// devCache is the device half of the cache s's storage rows live in: its
// own, or its pool's.
func (s *State) devCache() (*devKV, error) {
	if s.kvp != nil {
		return s.kvp.devCache()
	}
	if s.dkv == nil {
		var err error
		s.dkv, s.dkvMem, err = newDevKV(s.m, s.nCtx)
		if err != nil {
			return nil, err
		}
		runtime.AddCleanup(s, (*memList).free, s.dkvMem)
	}
	return s.dkv, nil
}

func (p *KVPool) devCache() (*devKV, error) {
	if p.dkv == nil {
		var err error
		p.dkv, p.dkvMem, err = newDevKV(p.m, p.blocks*p.blockTokens)
		if err != nil {
			return nil, err
		}
		runtime.AddCleanup(p, (*memList).free, p.dkvMem)
	}
	return p.dkv, nil
}

func newDevKV(m *Model, rows int) (*devKV, *memList, error) {
	o := m.off
	kv := &devKV{k: make([]device.Mem, m.NLayer), v: make([]device.Mem, m.NLayer)}
	l := &memList{devs: o.Devices}
	for layer, di := range o.Layer {
		if di < 0 {
			continue
		}
		var err error
		if kv.k[layer], err = devAlloc(o, l, di, 4*rows*m.kvDim()); err == nil {
			kv.v[layer], err = devAlloc(o, l, di, 4*rows*m.vDim())
		}
		if err != nil {
			l.free()
			return nil, nil, fmt.Errorf("KV cache of block %d: %w", layer, err)
		}
	}
	return kv, l, nil
}

// copyDevRows is copyRows for the device half of a pool's cache.
func (p *KVPool) copyDevRows(dst, src, n int) {
	o := p.m.off
	if p.dkv == nil || o == nil {
		return
	}
	kd, vd := p.m.kvDim(), p.m.vDim()
	for l, di := range o.Layer {
		if di < 0 {
			continue
		}
		d := o.Devices[di]
		err := d.Copy(p.dkv.k[l].Floats(dst*kd, n*kd), p.dkv.k[l].Floats(src*kd, n*kd))
		if err == nil {
			err = d.Copy(p.dkv.v[l].Floats(dst*vd, n*vd), p.dkv.v[l].Floats(src*vd, n*vd))
		}
		if err != nil && o.err == nil {
			o.err = fmt.Errorf("copying KV rows on %s: %w", d.Name(), err)
		}
	}
}

// moveTo makes the batch's T rows of activations live on device di (-1:
// the host): one copy per boundary, through the host between devices.
func (s *State) moveTo(di, T int) error {
	if s.m.off == nil {
		return nil
	}
	if s.dev == nil {
		if di < 0 {
			return nil
		}
		if _, err := s.devBuffers(di); err != nil {
			return err
		}
		s.dev.loc = -1
	}
	from := s.dev.loc
	if from == di {
		return nil
	}
	o, n := s.m.off, T*s.m.NEmbd
	x := ggml.F32Bytes(s.x[:n])
	if from >= 0 {
		if err := o.Devices[from].Read(x, s.dev.b[from].x.Floats(0, n)); err != nil {
			return err
		}
		s.actSrc = nil // x's rows are new to the host's activation cache
	}
	if di >= 0 {
		b, err := s.devBuffers(di)
		if err != nil {
			return err
		}
		if !b.posValid {
			if err := s.writePositions(di, b, T); err != nil {
				return err
			}
		}
		if err := o.Devices[di].Write(b.x.Floats(0, n), x); err != nil {
			return err
		}
	}
	s.dev.loc = di
	return nil
}

// writePositions copies the batch rows' positions to device di (RoPE).
func (s *State) writePositions(di int, b *devBufs, T int) error {
	pos := make([]int32, T) // one small allocation per forward pass and device
	for t := range T {
		pos[t] = int32(s.rowPos[t])
	}
	b.posValid = true
	return s.m.off.Devices[di].Write(b.pos.Floats(0, T), unsafe.Slice((*byte)(unsafe.Pointer(&pos[0])), 4*T))
}

// devLayer runs block l on its device over the batch's T rows (x already
// there), in the CPU block's order: x += O·attn(rope(Q,K)·norm(x)), then
// x += down(silu(gate·n)·(up·n)), n = ffn_norm(x).
func (s *State) devLayer(l, T int) error {
	m, o := s.m, s.m.off
	di := o.Layer[l]
	d, b, w := o.Devices[di], s.dev.b[di], &o.w[l]
	c, dm := m.Config, m.NEmbd
	x, xn, tmp := b.x.Floats(0, T*dm), b.xn.Floats(0, T*dm), b.tmp.Floats(0, T*dm)
	q, k, v := b.q.Floats(0, T*c.qDim()), b.k.Floats(0, T*c.kvDim()), b.v.Floats(0, T*c.vDim())
	out := b.out.Floats(0, T*c.NHead*c.HeadDimV)
	errs := []error{
		d.RMSNorm(x, w.attnNorm, xn, dm, T, c.NormEps),
		mm(d, w.q, xn, q, T), mm(d, w.k, xn, k, T), mm(d, w.v, xn, v, T),
	}
	if m.useRope {
		errs = append(errs,
			d.RoPE(q, b.pos, T, c.qDim(), c.NHead, c.HeadDim, c.NRot, c.RopeTheta, c.RopeFreqScale, m.ropeHalf),
			d.RoPE(k, b.pos, T, c.kvDim(), c.NHeadKV, c.HeadDim, c.NRot, c.RopeTheta, c.RopeFreqScale, m.ropeHalf))
	}
	errs = append(errs, s.devAttention(l, di, b, q, k, v, out))
	nff := w.gate.rows
	gate, up := b.gate.Floats(0, T*nff), b.up.Floats(0, T*nff)
	errs = append(errs,
		mm(d, w.o, out, tmp, T), d.Add(x, tmp, T*dm),
		d.RMSNorm(x, w.ffnNorm, xn, dm, T, c.NormEps),
		mm(d, w.gate, xn, gate, T), mm(d, w.up, xn, up, T), d.SiLUMul(gate, gate, up, T*nff),
		mm(d, w.dn, gate, tmp, T), d.Add(x, tmp, T*dm))
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("block %d on %s: %w", l, d.Name(), err)
		}
	}
	return nil
}

func mm(d device.Device, w devLinear, x, y device.Mem, T int) error {
	return d.MatMul(w.t, w.w, x, y, w.n, w.rows, T)
}

// devAttention stores the batch's K/V rows in each segment's device cache
// and attends each row over its sequence's positions [0, p] (causal), one
// decode-attention launch per row. Keys in paged blocks that are not
// consecutive storage rows are gathered first.
func (s *State) devAttention(l, di int, b *devBufs, q, k, v, out device.Mem) error {
	m, d := s.m, s.m.off.Devices[di]
	kd, qd, od := m.kvDim(), m.qDim(), m.NHead*m.HeadDimV
	for i := range s.segs {
		g := &s.segs[i]
		kv, err := g.Seq.devCache()
		if err != nil {
			return err
		}
		for j := range g.Tokens {
			r, t := g.Seq.row(g.Seq.pos+j), g.row0+j
			if err := d.Copy(kv.k[l].Floats(r*kd, kd), k.Floats(t*kd, kd)); err != nil {
				return err
			}
			if err := d.Copy(kv.v[l].Floats(r*kd, kd), v.Floats(t*kd, kd)); err != nil {
				return err
			}
		}
		for j := range g.Tokens {
			n, t := g.Seq.pos+j+1, g.row0+j
			kc, vc, err := s.devKeys(g.Seq, kv, l, di, b, n)
			if err == nil {
				err = d.Attn(q.Floats(t*qd, qd), kc, vc, b.scratch.Floats(0, m.NHead*n), out.Floats(t*od, od),
					n, m.HeadDim, m.NHead, m.NHeadKV, kd, m.attnScale)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// devKeys returns the device K and V rows of positions [0, n) of seq as
// consecutive rows: the cache itself when they are stored so, else copies
// of their runs in b.kg, b.vg.
func (s *State) devKeys(seq *State, kv *devKV, l, di int, b *devBufs, n int) (kc, vc device.Mem, err error) {
	kd := s.m.kvDim()
	if r, run := seq.run(0, n); run == n {
		return kv.k[l].Floats(r*kd, n*kd), kv.v[l].Floats(r*kd, n*kd), nil
	}
	o, d := s.m.off, s.m.off.Devices[di]
	if b.kg.Bytes() == 0 {
		if b.kg, err = devAlloc(o, s.devMem, di, 4*s.nCtx*kd); err == nil {
			b.vg, err = devAlloc(o, s.devMem, di, 4*s.nCtx*kd)
		}
		if err != nil {
			return kc, vc, err
		}
	}
	for j := 0; j < n; {
		r, run := seq.run(j, n)
		if err = d.Copy(b.kg.Floats(j*kd, run*kd), kv.k[l].Floats(r*kd, run*kd)); err == nil {
			err = d.Copy(b.vg.Floats(j*kd, run*kd), kv.v[l].Floats(r*kd, run*kd))
		}
		if err != nil {
			return kc, vc, err
		}
		j += run
	}
	return b.kg.Floats(0, n*kd), b.vg.Floats(0, n*kd), nil
}

// devOutput computes the wanted rows' logits on the head's device (x is
// there): rows gathered into xn, normalized, projected, read back.
func (s *State) devOutput(T int) ([]float32, error) {
	m, o := s.m, s.m.off
	di, d, dm := o.Output, o.Devices[o.Output], m.NEmbd
	b := s.dev.b[di]
	rows := 0
	for i := range s.segs {
		g := &s.segs[i]
		first, n := g.row0, len(g.Tokens)
		switch g.Logits {
		case LogitsNone:
			continue
		case LogitsLast:
			first, n = g.row0+n-1, 1
		}
		if err := d.Copy(b.xn.Floats(rows*dm, n*dm), b.x.Floats(first*dm, n*dm)); err != nil {
			return nil, err
		}
		rows += n
	}
	if rows == 0 {
		return nil, nil
	}
	nv := m.NVocab
	if b.logits.Bytes() < 4*rows*nv {
		var err error
		if b.logits, err = devAlloc(o, s.devMem, di, 4*max(rows, 1)*nv); err != nil {
			return nil, err
		}
	}
	if len(s.logits) < rows*nv {
		s.logits = make([]float32, rows*nv)
	}
	xn, lg := b.xn.Floats(0, rows*dm), b.logits.Floats(0, rows*nv)
	for _, err := range []error{
		d.RMSNorm(xn, o.outN, xn, dm, rows, m.OutNorm.Eps),
		d.MatMul(o.outW.t, o.outW.w, xn, lg, o.outW.n, o.outW.rows, rows),
		d.Read(ggml.F32Bytes(s.logits[:rows*nv]), lg),
	} {
		if err != nil {
			return nil, fmt.Errorf("output head on %s: %w", d.Name(), err)
		}
	}
	if c := m.FinalSoftcap; c > 0 {
		softcap(s.logits[:rows*nv], c)
	}
	return s.logits[:rows*nv], nil
}

// devBegin starts a forward pass: activations are on the host (embedded
// there) and no device holds this pass's positions yet.
func (s *State) devBegin() error {
	if s.dev == nil {
		return nil
	}
	s.dev.loc = -1
	for _, b := range s.dev.b {
		if b != nil {
			b.posValid = false
		}
	}
	return s.m.off.err
}

// forwardPlaced is forwardSegs's layer loop and head under a placement:
// each block runs where it is placed, the activations crossing once per
// boundary.
func (s *State) forwardPlaced(segs []Segment, T int) ([]float32, error) {
	m := s.m
	if err := s.devBegin(); err != nil {
		return nil, err
	}
	for l := range m.Layers {
		di := m.off.Layer[l]
		if err := s.moveTo(di, T); err != nil {
			return nil, err
		}
		if di < 0 {
			s.layer(l, T)
		} else if err := s.devLayer(l, T); err != nil {
			return nil, err
		}
	}
	if err := s.moveTo(m.off.Output, T); err != nil {
		return nil, err
	}
	for i := range segs {
		segs[i].Seq.pos += len(segs[i].Tokens)
	}
	if m.off.Output >= 0 {
		// devOutput reads the segments' row layout, which pos does not change.
		return s.devOutput(T)
	}
	return s.outputRows(T), nil
}
