package device

import (
	"errors"
	"testing"
)

// TestMeasureStandIn: Measure times a stand-in's product, link and
// latency (positive, finite rates), frees what it allocated, and says
// which device could not hold its buffers.
func TestMeasureStandIn(t *testing.T) {
	d := NewStandIn("cpu", 0, 32)
	keep, err := d.Alloc(1 << 10)
	if err != nil {
		t.Fatal(err)
	}
	before := d.Allocated()
	p, err := Measure(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !(p.ReadBytesPerSec > 0 && p.LinkBytesPerSec > 0 && p.LinkLatency > 0) || p.ReadBytesPerSec > 1e15 || p.LinkLatency > 1 {
		t.Errorf("measured %+v", p)
	}
	if got := d.Allocated(); got != before {
		t.Errorf("%d bytes allocated after Measure, %d before", got, before)
	}
	d.Free(keep)
	small := NewStandIn("cpu:small", ProbeMatrixBytes/2, 32)
	if _, err := Measure(small, 1); !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("a device smaller than the probe: %v", err)
	}
	if small.Allocated() != 0 {
		t.Errorf("%d bytes left allocated after a failed Measure", small.Allocated())
	}
}
