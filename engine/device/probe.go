package device

import (
	"fmt"
	"time"
)

// Probe is what the multi-device planner needs to know about a device,
// measured on it: how fast it reads weights (a decode step is bound by
// that) and how fast activations cross between it and the host (the
// tensor partition's all-reduces cross per sub-layer).
type Probe struct {
	ReadBytesPerSec float64 // an F16 matrix product of ProbeMatrixBytes, bytes of weights per second
	LinkBytesPerSec float64 // host→device then device→host of ProbeLinkBytes, bytes per second of the round trip
	LinkLatency     float64 // seconds of one 4-byte write and read, half the round trip
}

// The sizes Measure moves: large enough to time a bandwidth and small
// enough to fit beside any model (they are freed before Measure returns).
const (
	ProbeMatrixBytes = 16 << 20 // 2048 × 4096 F16 weights
	ProbeLinkBytes   = 8 << 20
)

// Measure times d: the best of reps runs of each operation after a
// warm-up (reps ≥ 1). The numbers steer the planner's choice between
// partitions (engine/multigpu's Auto), not a benchmark: a stand-in
// reports its CPU twins' speed and a memcpy, which is what it runs at.
func Measure(d Device, reps int) (Probe, error) {
	reps = max(reps, 1)
	var p Probe
	const n, rows = 4096, ProbeMatrixBytes / (2 * 4096)
	var allocs []Mem
	defer func() {
		for _, m := range allocs {
			d.Free(m)
		}
	}()
	alloc := func(bytes int) (Mem, error) {
		m, err := d.Alloc(bytes)
		if err == nil {
			allocs = append(allocs, m)
		}
		return m, err
	}
	w, err := alloc(ProbeMatrixBytes)
	if err != nil {
		return p, fmt.Errorf("%s: measuring: %w", d.Name(), err)
	}
	x, err := alloc(4 * n)
	if err != nil {
		return p, fmt.Errorf("%s: measuring: %w", d.Name(), err)
	}
	y, err := alloc(4 * rows)
	if err != nil {
		return p, fmt.Errorf("%s: measuring: %w", d.Name(), err)
	}
	link, err := alloc(ProbeLinkBytes)
	if err != nil {
		return p, fmt.Errorf("%s: measuring: %w", d.Name(), err)
	}
	host := make([]byte, ProbeLinkBytes)
	// Weights of 0x3c00 (F16 1.0): finite, so no kernel takes a slow path.
	for i := 0; i < len(host); i += 2 {
		host[i], host[i+1] = 0x00, 0x3c
	}
	if err := d.Write(w.Slice(0, ProbeLinkBytes), host); err != nil {
		return p, err
	}
	if err := d.Write(w.Slice(ProbeLinkBytes, ProbeMatrixBytes-ProbeLinkBytes), host[:ProbeMatrixBytes-ProbeLinkBytes]); err != nil {
		return p, err
	}
	out := make([]byte, 4*rows)
	best := func(op func() error) (float64, error) {
		b := 0.0
		for i := range reps + 1 { // the first run warms up
			t0 := time.Now()
			if err := op(); err != nil {
				return 0, err
			}
			if s := time.Since(t0).Seconds(); i > 0 && (b == 0 || s < b) {
				b = s
			}
		}
		return max(b, 1e-9), nil
	}
	tRead, err := best(func() error {
		if err := d.MatMul(F16, w, x, y, n, rows, 1); err != nil {
			return err
		}
		return d.Read(out, y) // waits for the product
	})
	if err != nil {
		return p, fmt.Errorf("%s: measuring: %w", d.Name(), err)
	}
	tLink, err := best(func() error {
		if err := d.Write(link, host); err != nil {
			return err
		}
		return d.Read(host, link)
	})
	if err != nil {
		return p, fmt.Errorf("%s: measuring: %w", d.Name(), err)
	}
	word := make([]byte, 4)
	tTiny, err := best(func() error {
		if err := d.Write(link.Slice(0, 4), word); err != nil {
			return err
		}
		return d.Read(word, link.Slice(0, 4))
	})
	if err != nil {
		return p, fmt.Errorf("%s: measuring: %w", d.Name(), err)
	}
	p.ReadBytesPerSec = ProbeMatrixBytes / tRead
	p.LinkBytesPerSec = 2 * ProbeLinkBytes / tLink
	p.LinkLatency = tTiny / 2
	return p, nil
}
