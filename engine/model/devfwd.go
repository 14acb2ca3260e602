package model

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"flowchat/engine/device"
	"flowchat/engine/ggml"
)

// devState is a State's buffers on the devices of the model's placement:
// one devBufs per device, allocated at the first forward pass that uses
// the device and freed when the State is collected.
type devState struct {
	b    []*devBufs
	loc  int         // where the batch's activations x are: -1 host, else a device
	rows int         // the pass's batch rows (positions are written for all of them)
	host [][]float32 // per lead device, [maxBatch × d_model] staging of tensor splits' copies through the host
}

// devBufs are one device's activations for batches of up to maxBatch rows
// (shapes as the State's host buffers) and its attention scratch.
type devBufs struct {
	x, xn, tmp, q, k, v, out, gate, up device.Mem
	red                                device.Mem // [maxBatch × d_model] a lead's received partial sums (tensor.go)
	kd                                 int        // the widest K row of the shards here, floats
	pos                                device.Mem // [maxBatch] int32 positions
	scratch                            device.Mem // attention scores and split partials (devScratch)
	kg, vg                             device.Mem // [nCtx × kvDim] keys gathered from paged blocks
	logits                             device.Mem // [rows × nVocab], grown on demand
	posValid                           bool       // pos holds this pass's positions
}

// devKV is a KV cache's device half: per block on a device and per shard
// of the block, K and V of the shard's KV heads for every storage row of
// the cache (a State's nCtx rows, or a KVPool's blocks·blockTokens),
// indexed like the host cache, in rows of t (device.KVType of the host
// cache's type: F16 or Q8_0 as the host's, else F32).
type devKV struct {
	t    device.WeightType
	k, v [][]device.Mem // per layer, per shard; nil for host blocks
}

// rows is rows [r, r+n) of a cache m of kd-element rows.
func (kv *devKV) rows(m device.Mem, kd, r, n int) device.Mem {
	rb := kv.t.RowBytes(kd)
	return m.Slice(r*rb, n*rb)
}

// memList frees device memory; a cleanup owns one so that it does not
// keep the State or pool reachable.
type memList struct {
	mu   sync.Mutex // devices' goroutines allocate gather buffers at once (concurrent.go)
	devs []device.Device
	mems [][]device.Mem
}

func (l *memList) add(di int, m device.Mem) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.mems) <= di {
		l.mems = append(l.mems, nil)
	}
	l.mems[di] = append(l.mems[di], m)
}

func (l *memList) free() {
	l.mu.Lock()
	defer l.mu.Unlock()
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

// devBuffers returns s's buffers on device di, allocating them first,
// sized for the largest shard di holds.
func (s *State) devBuffers(di int) (*devBufs, error) {
	o := s.m.off
	s.initDev()
	if b := s.dev.b[di]; b != nil {
		return b, nil
	}
	c, T := s.m.Config, s.maxBatch
	b := &devBufs{}
	var nh, nkv, nff int
	lead := false
	for l := range o.w {
		for i := range o.w[l].shards {
			if sh := &o.w[l].shards[i]; sh.Device == di {
				nh, nkv, nff = max(nh, sh.nHead), max(nkv, sh.nKV), max(nff, sh.nff)
				lead = lead || (i == 0 && len(o.w[l].shards) > 1)
			}
		}
	}
	b.kd = nkv * c.HeadDim
	bufs := []struct {
		m *device.Mem
		n int // floats
	}{
		{&b.x, T * c.NEmbd}, {&b.xn, T * c.NEmbd}, {&b.tmp, T * c.NEmbd}, {&b.q, T * nh * c.HeadDim},
		{&b.k, T * b.kd}, {&b.v, T * nkv * c.HeadDimV}, {&b.out, T * nh * c.HeadDimV},
		{&b.gate, T * nff}, {&b.up, T * nff}, {&b.pos, T}, {&b.scratch, devScratch(nh, s.nCtx, c.HeadDim)},
	}
	if lead {
		bufs = append(bufs, struct {
			m *device.Mem
			n int
		}{&b.red, T * c.NEmbd})
	}
	for _, a := range bufs {
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
	if t := device.KVType(s.KVType(), s.m.HeadDim); s.dkv != nil && s.dkv.t != t {
		s.dkvMem.free() // the cache type changed while empty (SetKVType)
		s.dkv = nil
	}
	if s.dkv == nil {
		var err error
		s.dkv, s.dkvMem, err = newDevKV(s.m, s.nCtx, device.KVType(s.KVType(), s.m.HeadDim))
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
		p.dkv, p.dkvMem, err = newDevKV(p.m, p.blocks*p.blockTokens, device.KVType(p.kvType(), p.m.HeadDim))
		if err != nil {
			return nil, err
		}
		runtime.AddCleanup(p, (*memList).free, p.dkvMem)
	}
	return p.dkv, nil
}

func newDevKV(m *Model, rows int, t device.WeightType) (*devKV, *memList, error) {
	o := m.off
	kv := &devKV{t: t, k: make([][]device.Mem, m.NLayer), v: make([][]device.Mem, m.NLayer)}
	l := &memList{devs: o.Devices}
	for layer := range o.w {
		for _, sh := range o.w[layer].shards {
			k, err := devAlloc(o, l, sh.Device, rows*t.RowBytes(sh.kvDim(m.HeadDim)))
			var v device.Mem
			if err == nil {
				v, err = devAlloc(o, l, sh.Device, rows*t.RowBytes(sh.nKV*m.HeadDimV))
			}
			if err != nil {
				l.free()
				return nil, nil, fmt.Errorf("KV cache of block %d: %w", layer, err)
			}
			kv.k[layer], kv.v[layer] = append(kv.k[layer], k), append(kv.v[layer], v)
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
	for l := range o.w {
		for i, sh := range o.w[l].shards {
			kd, d, kv := sh.kvDim(p.m.HeadDim), o.Devices[sh.Device], p.dkv
			err := d.Copy(kv.rows(kv.k[l][i], kd, dst, n), kv.rows(kv.k[l][i], kd, src, n))
			if err == nil {
				err = d.Copy(kv.rows(kv.v[l][i], kd, dst, n), kv.rows(kv.v[l][i], kd, src, n))
			}
			if err != nil && o.err == nil {
				o.err = fmt.Errorf("copying KV rows on %s: %w", d.Name(), err)
			}
		}
	}
}

// moveTo makes the batch's T rows of activations live on device di (-1:
// the host): one copy per boundary; between devices a device.Transfer
// (peer to peer, or through pinned memory, on GPUs of one backend; through
// the host otherwise).
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
	if from >= 0 && di >= 0 {
		b, err := s.devBuffers(di)
		if err == nil && !b.posValid {
			err = s.writePositions(di, b, T)
		}
		if err == nil {
			s.actSrc = nil // x may stage the copy
			err = device.Transfer(o.Devices[di], b.x.Floats(0, n), o.Devices[from], s.dev.b[from].x.Floats(0, n), x)
		}
		if err != nil {
			return err
		}
		s.dev.loc = di
		return nil
	}
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

// devLayer runs block l on its devices over the batch's rows [r0, r0+T)
// (x already on the lead; all of the batch, or a micro-batch of a
// pipeline: concurrent.go), in the CPU block's order: x += O·attn(rope(Q,K)·norm(x)),
// then x += down(silu(gate·n)·(up·n)), n = ffn_norm(x); each sub-layer's
// projections run per shard and are summed on the lead (tensor.go). The
// rows' activations are rows r0… of x; the other buffers hold the T rows
// from their start.
func (s *State) devLayer(l, r0, T int) error {
	w := &s.m.off.w[l]
	if err := s.devSub(l, r0, T, w.attnNorm, s.devAttnPart); err != nil {
		return err
	}
	return s.devSub(l, r0, T, w.ffnNorm, s.devFFNPart)
}

// devAttnPart is shard si's attention: its heads' Q/K/V from xn, RoPE,
// attention over its KV cache, and its columns of O into tmp.
func (s *State) devAttnPart(l, si, r0, T int) (bool, error) {
	m := s.m
	sh := &m.off.w[l].shards[si]
	if sh.nKV == 0 {
		return false, nil
	}
	d, b, c := m.off.Devices[sh.Device], s.dev.b[sh.Device], m.Config
	qd, kd := sh.qDim(c.HeadDim), sh.kvDim(c.HeadDim)
	xn, tmp := b.xn.Floats(0, T*c.NEmbd), b.tmp.Floats(0, T*c.NEmbd)
	q, k, v := b.q.Floats(0, T*qd), b.k.Floats(0, T*kd), b.v.Floats(0, T*kd)
	out := b.out.Floats(0, T*sh.nHead*c.HeadDimV)
	errs := []error{mm(d, sh.q, xn, q, T), mm(d, sh.k, xn, k, T), mm(d, sh.v, xn, v, T)}
	pos := b.pos.Floats(r0, T)
	if m.useRope {
		errs = append(errs,
			d.RoPE(q, pos, T, qd, sh.nHead, c.HeadDim, c.NRot, c.RopeTheta, c.RopeFreqScale, m.ropeHalf),
			d.RoPE(k, pos, T, kd, sh.nKV, c.HeadDim, c.NRot, c.RopeTheta, c.RopeFreqScale, m.ropeHalf))
	}
	errs = append(errs, s.devAttention(l, si, r0, T, b, q, k, v, out), mm(d, sh.o, out, tmp, T))
	return true, errors.Join(errs...)
}

// devFFNPart is shard si's FFN rows: silu(gate·xn)·(up·xn), then its
// columns of down into tmp.
func (s *State) devFFNPart(l, si, r0, T int) (bool, error) {
	m := s.m
	sh := &m.off.w[l].shards[si]
	if sh.nff == 0 {
		return false, nil
	}
	d, b, dm := m.off.Devices[sh.Device], s.dev.b[sh.Device], m.NEmbd
	xn, tmp := b.xn.Floats(0, T*dm), b.tmp.Floats(0, T*dm)
	gate, up := b.gate.Floats(0, T*sh.nff), b.up.Floats(0, T*sh.nff)
	return true, errors.Join(mm(d, sh.gate, xn, gate, T), mm(d, sh.up, xn, up, T),
		d.SiLUMul(gate, gate, up, T*sh.nff), mm(d, sh.dn, gate, tmp, T))
}

func mm(d device.Device, w devLinear, x, y device.Mem, T int) error {
	return d.MatMul(w.t, w.w, x, y, w.n, w.rows, T)
}

// devAttention stores the K/V rows of shard si's heads of the batch's
// rows [r0, r0+T) (q, k, v and out hold those rows) in each segment's
// device cache and attends each row over its sequence's positions [0, p]
// (causal): a segment's rows in one tiled prefill launch, a decode row
// over a long context split over chunks (devAttendFast), else one
// decode-attention launch per row. Keys in paged blocks that are not
// consecutive storage rows are gathered first.
func (s *State) devAttention(l, si, r0, T int, b *devBufs, q, k, v, out device.Mem) error {
	m := s.m
	sh := &m.off.w[l].shards[si]
	d := m.off.Devices[sh.Device]
	kd, qd, od := sh.kvDim(m.HeadDim), sh.qDim(m.HeadDim), sh.nHead*m.HeadDimV
	for i := range s.segs {
		g := &s.segs[i]
		kv, err := g.Seq.devCache()
		if err != nil {
			return err
		}
		kc, vc := kv.k[l][si], kv.v[l][si]
		j0, j1 := max(r0-g.row0, 0), min(r0+T-g.row0, len(g.Tokens)) // the segment's tokens in the rows
		// One store per run of consecutive cache rows (the whole prompt
		// when its blocks follow each other), not one per token: a 512-token
		// prompt of a 32-layer model made 32768 launches of a few µs each.
		for j := j0; j < j1; {
			r, run := g.Seq.run(g.Seq.pos+j, g.Seq.pos+j1)
			t := g.row0 + j - r0
			if err := d.StoreKV(kv.t, k.Floats(t*kd, run*kd), kv.rows(kc, kd, r, run), run*kd); err != nil {
				return err
			}
			if err := d.StoreKV(kv.t, v.Floats(t*kd, run*kd), kv.rows(vc, kd, r, run), run*kd); err != nil {
				return err
			}
			j += run
		}
		done, err := s.devAttendFast(l, si, b, kv, kc, vc, g, j0, j1, r0, q, out)
		if err != nil {
			return err
		}
		if done || j0 >= j1 {
			continue
		}
		for j := j0; j < j1; j++ {
			n, t := g.Seq.pos+j+1, g.row0+j-r0
			kr, vr, err := s.devKeys(g.Seq, kv, kc, vc, sh.Device, kd, b, n)
			if err == nil {
				err = d.Attn(kv.t, q.Floats(t*qd, qd), kr, vr, b.scratch.Floats(0, sh.nHead*n), out.Floats(t*od, od),
					n, m.HeadDim, sh.nHead, sh.nKV, kd, m.attnScale)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// devKeys returns the device K and V rows (kd elements each, caches kc
// and vc of kv) of positions [0, n) of seq as consecutive rows: the cache
// itself when they are stored so, else copies of their runs in b.kg, b.vg
// (sized for float32 rows, the widest).
func (s *State) devKeys(seq *State, kv *devKV, kc, vc device.Mem, di, kd int, b *devBufs, n int) (kr, vr device.Mem, err error) {
	if r, run := seq.run(0, n); run == n {
		return kv.rows(kc, kd, r, n), kv.rows(vc, kd, r, n), nil
	}
	o, d := s.m.off, s.m.off.Devices[di]
	if b.kg.Bytes() == 0 {
		if b.kg, err = devAlloc(o, s.devMem, di, 4*s.nCtx*b.kd); err == nil {
			b.vg, err = devAlloc(o, s.devMem, di, 4*s.nCtx*b.kd)
		}
		if err != nil {
			return kr, vr, err
		}
	}
	for j := 0; j < n; {
		r, run := seq.run(j, n)
		if err = d.Copy(kv.rows(b.kg, kd, j, run), kv.rows(kc, kd, r, run)); err == nil {
			err = d.Copy(kv.rows(b.vg, kd, j, run), kv.rows(vc, kd, r, run))
		}
		if err != nil {
			return kr, vr, err
		}
		j += run
	}
	return kv.rows(b.kg, kd, 0, n), kv.rows(b.vg, kd, 0, n), nil
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

// initDev makes s's devState for the placement's devices (no buffers yet).
func (s *State) initDev() {
	o := s.m.off
	if s.dev == nil || len(s.dev.b) != len(o.Devices) {
		s.dev = &devState{b: make([]*devBufs, len(o.Devices)), loc: -1}
		s.devMem = &memList{devs: o.Devices}
		runtime.AddCleanup(s, (*memList).free, s.devMem)
	}
}

// devBegin starts a forward pass of T rows: activations are on the host
// (embedded there) and no device holds this pass's positions yet.
func (s *State) devBegin(T int) error {
	s.initDev()
	s.dev.loc, s.dev.rows = -1, T
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
	if err := s.devBegin(T); err != nil {
		return nil, err
	}
	for i := range segs { // made here: shards and stages run at once (concurrent.go)
		if _, err := segs[i].Seq.devCache(); err != nil {
			return nil, err
		}
	}
	if p := s.pipelinePlan(T); p != nil {
		if err := s.runPipeline(p, T); err != nil {
			return nil, err
		}
	} else if err := s.placedLayers(T); err != nil {
		return nil, err
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

// placedLayers runs the blocks one after another where they are placed,
// the activations crossing once per boundary.
func (s *State) placedLayers(T int) error {
	m := s.m
	for l := range m.Layers {
		di := m.off.Layer[l]
		if err := s.moveTo(di, T); err != nil {
			return err
		}
		if di < 0 {
			s.layer(l, T)
		} else if err := s.devLayer(l, 0, T); err != nil {
			return err
		}
	}
	return nil
}
