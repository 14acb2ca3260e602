package model

import (
	"fmt"

	"flowchat/engine/device"
	"flowchat/engine/ggml"
)

// A tensor-split block (Placement.Tensor) runs each sub-layer as
//
//	lead:   xn = norm(x)                   (the lead is shards[0]'s device)
//	host:   xn → every other shard's device
//	shards: tmp_i = part_i(xn)             (its heads' attention and O columns,
//	                                        or its FFN rows and down columns)
//	lead:   tmp = tmp_0 + tmp_1 + … in shard order, then x += tmp
//
// The partial sums cross by device.Transfer into the lead's red buffer
// (peer copies where the GPUs allow it, else through pinned host memory;
// through the host for stand-ins) and are added on the lead by the Add
// kernel in shard order, so the result does not depend on
// timing: runs are bit for bit repeatable. It differs from one device's
// only in that order (one device sums a row of O or down over all its
// columns in one kernel), within the bound stated by TestTensorSplit. An
// unsplit block is one shard: no copies, the single-device pass as it was.

// devSub runs one sub-layer of block l over the batch's rows [r0, r0+T):
// x += Σ part(norm(x)) over the block's shards, which run at once, each on
// its device's goroutine (concurrent.go); their partials are summed in
// shard order after all are done.
func (s *State) devSub(l, r0, T int, norm device.Mem, part func(l, si, r0, T int) (bool, error)) error {
	o, c := s.m.off, s.m.Config
	w := &o.w[l]
	lead := w.shards[0].Device
	d, b := o.Devices[lead], s.dev.b[lead]
	x, xn := b.x.Floats(r0*c.NEmbd, T*c.NEmbd), b.xn.Floats(0, T*c.NEmbd)
	if err := d.RMSNorm(x, norm, xn, c.NEmbd, T, c.NormEps); err != nil {
		return fmt.Errorf("block %d on %s: %w", l, d.Name(), err)
	}
	if err := s.broadcast(l, T); err != nil {
		return err
	}
	ok, errs := make([]bool, len(w.shards)), make([]error, len(w.shards))
	o.eachShard(w, func(si int) { ok[si], errs[si] = part(l, si, r0, T) })
	var got []int // shards that computed a partial, in order
	for si := range w.shards {
		if errs[si] != nil {
			return fmt.Errorf("block %d on %s: %w", l, o.Devices[w.shards[si].Device].Name(), errs[si])
		}
		if ok[si] {
			got = append(got, si)
		}
	}
	if len(got) == 0 {
		return nil
	}
	if err := s.reduce(l, T, got); err != nil {
		return err
	}
	if err := d.Add(x, b.tmp.Floats(0, T*c.NEmbd), T*c.NEmbd); err != nil {
		return fmt.Errorf("block %d on %s: %w", l, d.Name(), err)
	}
	return nil
}

// broadcast copies the lead's normalized rows xn to the other shards'
// devices by device.Transfer (peer or pinned copies between GPUs of one
// backend, else through the host; and their positions, the first time in
// a pass).
func (s *State) broadcast(l, T int) error {
	o, n := s.m.off, T*s.m.NEmbd
	w := &o.w[l]
	if len(w.shards) == 1 {
		return nil
	}
	lead := w.shards[0].Device
	host := s.stage(lead, n)
	for _, sh := range w.shards[1:] {
		b, err := s.devBuffers(sh.Device)
		if err == nil && !b.posValid {
			err = s.writePositions(sh.Device, b, s.dev.rows)
		}
		if err == nil {
			err = device.Transfer(o.Devices[sh.Device], b.xn.Floats(0, n), o.Devices[lead], s.dev.b[lead].xn.Floats(0, n), host)
		}
		if err != nil {
			return fmt.Errorf("block %d: to %s: %w", l, o.Devices[sh.Device].Name(), err)
		}
	}
	return nil
}

// reduce leaves Σ tmp_i over the shards got, added in their order, in the
// lead's tmp.
func (s *State) reduce(l, T int, got []int) error {
	o, n := s.m.off, T*s.m.NEmbd
	w := &o.w[l]
	lead := w.shards[0].Device
	d, b := o.Devices[lead], s.dev.b[lead]
	host := s.stage(lead, n)
	for k, si := range got {
		di := w.shards[si].Device
		if di == lead { // only ever the first: shards[0] is the lead
			continue
		}
		dst := b.red
		if k == 0 { // the lead computed nothing: the first partial is the sum so far
			dst = b.tmp
		}
		err := device.Transfer(d, dst.Floats(0, n), o.Devices[di], s.dev.b[di].tmp.Floats(0, n), host)
		if err == nil && k > 0 {
			err = d.Add(b.tmp.Floats(0, n), b.red.Floats(0, n), n)
		}
		if err != nil {
			return fmt.Errorf("block %d: summing %s's part on %s: %w", l, o.Devices[di].Name(), d.Name(), err)
		}
	}
	return nil
}

// stage is the State's host staging buffer of lead device di for n
// floats, as bytes (one per lead: a pipeline's stages copy at once).
func (s *State) stage(di, n int) []byte {
	if len(s.dev.host) != len(s.m.off.Devices) {
		s.dev.host = make([][]float32, len(s.m.off.Devices))
	}
	if len(s.dev.host[di]) < s.maxBatch*s.m.NEmbd {
		s.dev.host[di] = make([]float32, s.maxBatch*s.m.NEmbd)
	}
	return ggml.F32Bytes(s.dev.host[di][:n])
}
