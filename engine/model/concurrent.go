package model

import (
	"errors"
	"fmt"
	"sync"

	"flowchat/engine/device"
	"flowchat/engine/ggml"
)

// Devices run at the same time (issue 16):
//
//   - The shards of a tensor-split sub-layer are independent until the
//     all-reduce: eachShard runs each on a goroutine of its own (one per
//     device, each device with its own stream), waits for all, and the
//     partials are then summed on the lead in shard order, as before.
//   - A layer (or hybrid) partition's prompt is cut into micro-batches of
//     rows that flow through the stages (the runs of blocks on one device
//     or tensor group): stage k works on micro-batch j while stage k+1
//     works on micro-batch j−1, each stage on its own goroutine, each
//     handing a micro-batch's activation rows to the next through the
//     host (pipelinePlan, runPipeline).
//
// Neither changes an operation's inputs or order on any device: the
// kernels are per row (chunked prompts give the one batch's bits), the
// sums keep their order, so results are bit for bit those of the
// sequential order (TestConcurrentBitIdentical).

// serialDevices runs shards and stages one after another (the order before
// devices ran at once), for the tests that compare the two.
var serialDevices = false

// eachShard runs fn(si) for every shard of w: at once, each on its own
// goroutine, when the shards are on distinct devices (a device is used by
// one goroutine at a time); one after another otherwise.
func (o *offload) eachShard(w *devLayer, fn func(si int)) {
	if len(w.shards) == 1 || serialDevices || !distinctShards(w) {
		for si := range w.shards {
			fn(si)
		}
		return
	}
	var wg sync.WaitGroup
	for si := 1; si < len(w.shards); si++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(si)
		}()
	}
	fn(0) // the lead's part on the calling goroutine
	wg.Wait()
}

func distinctShards(w *devLayer) bool {
	for i := range w.shards {
		for j := range i {
			if w.shards[i].Device == w.shards[j].Device {
				return false
			}
		}
	}
	return true
}

// pipeStage is a run of consecutive blocks [first, end) on one device or
// tensor group (devs: every device its blocks use).
type pipeStage struct {
	first, end int
	lead       int
	devs       []int
}

// pipeline is a forward pass's plan: host blocks [0, first), then the
// stages, over micro-batches of rows.
type pipeline struct {
	first  int
	stages []pipeStage
	cuts   []int // micro-batch row boundaries: 0 = cuts[0] < … < cuts[n] = T
}

// pipelineMicroBatches is how many micro-batches a pipeline of k stages
// cuts a batch into (at most one per row): 2k keeps every stage busy but
// at the ends.
func pipelineMicroBatches(k int) int { return 2 * k }

// pipelinePlan is the pipeline for a pass of T rows, or nil where the
// blocks run in order: a single row, serialDevices, a placement that is
// not host blocks followed by device blocks, fewer than two stages, or
// stages that share a device.
func (s *State) pipelinePlan(T int) *pipeline {
	o := s.m.off
	if T < 2 || serialDevices {
		return nil
	}
	p := &pipeline{first: len(o.Layer)}
	for l, di := range o.Layer {
		switch {
		case di < 0 && len(p.stages) > 0:
			return nil // a host block after device blocks
		case di < 0:
			continue
		case len(p.stages) == 0:
			p.first = l
		}
		if n := len(p.stages); n > 0 && p.stages[n-1].lead == di && sameShards(&o.w[l], &o.w[p.stages[n-1].first]) {
			p.stages[n-1].end = l + 1
			continue
		}
		st := pipeStage{first: l, end: l + 1, lead: di}
		for _, sh := range o.w[l].shards {
			st.devs = append(st.devs, sh.Device)
		}
		p.stages = append(p.stages, st)
	}
	if len(p.stages) < 2 {
		return nil
	}
	used := map[int]bool{}
	for _, st := range p.stages {
		for _, di := range st.devs {
			if used[di] {
				return nil
			}
		}
		for _, di := range st.devs {
			used[di] = true
		}
	}
	n := min(T, pipelineMicroBatches(len(p.stages)))
	if T > device.MatvecMaxCols {
		// Micro-batches stay wide enough for the tiled matrix kernels, as
		// the whole batch is: their sums are ordered otherwise than the
		// matvec's, and a cut must change no bit.
		n = min(n, T/(device.MatvecMaxCols+1))
	}
	if n < 2 {
		return nil
	}
	for i := range n + 1 {
		p.cuts = append(p.cuts, i*T/n)
	}
	return p
}

// sameShards says whether blocks a and b are split over the same devices.
func sameShards(a, b *devLayer) bool {
	if len(a.shards) != len(b.shards) {
		return false
	}
	for i := range a.shards {
		if a.shards[i].Device != b.shards[i].Device {
			return false
		}
	}
	return true
}

// runPipeline runs the host blocks, then the stages over the
// micro-batches, each stage on its own goroutine: it takes micro-batch j's
// rows once the previous stage has handed them over (in s.x, the host
// activations), runs its blocks on them and hands them on. The last stage
// leaves its rows on its lead when the head is there. Everything the
// stages would allocate or write lazily (buffers, positions, KV caches,
// staging) is made first, on this goroutine.
func (s *State) runPipeline(p *pipeline, T int) error {
	o := s.m.off
	for l := range p.first {
		s.layer(l, T)
	}
	for _, st := range p.stages {
		for _, di := range st.devs {
			b, err := s.devBuffers(di)
			if err == nil {
				err = s.writePositions(di, b, T)
			}
			if err != nil {
				return err
			}
			s.stage(di, 0)
		}
	}
	s.actSrc = nil // x's rows will be the devices'
	last := len(p.stages) - 1
	keep := o.Output == p.stages[last].lead // the head reads x on the last lead
	done := make([][]chan struct{}, len(p.stages))
	for k := range done {
		done[k] = make([]chan struct{}, len(p.cuts)-1)
		for j := range done[k] {
			done[k][j] = make(chan struct{})
		}
	}
	errs := make([]error, len(p.stages))
	var failed sync.Once
	stop := make(chan struct{}) // closed at the first error: the other stages stop
	var wg sync.WaitGroup
	for k, st := range p.stages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range len(p.cuts) - 1 {
				if k > 0 {
					select {
					case <-done[k-1][j]:
					case <-stop:
						return
					}
				}
				if err := s.pipeStep(st, p.cuts[j], p.cuts[j+1]-p.cuts[j], k == last && keep); err != nil {
					errs[k] = err
					failed.Do(func() { close(stop) })
					return
				}
				close(done[k][j])
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	s.dev.loc = -1
	if keep {
		s.dev.loc = o.Output
	}
	return nil
}

// pipeStep runs stage st's blocks over the batch rows [r0, r0+n): the
// rows from the host to the lead, the blocks, and back to the host unless
// keep.
func (s *State) pipeStep(st pipeStage, r0, n int, keep bool) error {
	m := s.m
	d, b, dm := m.off.Devices[st.lead], s.dev.b[st.lead], m.NEmbd
	x := ggml.F32Bytes(s.x[r0*dm : (r0+n)*dm])
	if err := d.Write(b.x.Floats(r0*dm, n*dm), x); err != nil {
		return fmt.Errorf("to %s: %w", d.Name(), err)
	}
	for l := st.first; l < st.end; l++ {
		if err := s.devLayer(l, r0, n); err != nil {
			return err
		}
	}
	if keep {
		return nil
	}
	if err := d.Read(x, b.x.Floats(r0*dm, n*dm)); err != nil {
		return fmt.Errorf("from %s: %w", d.Name(), err)
	}
	return nil
}
