package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

type countTask struct {
	hits    []atomic.Int32
	workers [8]atomic.Int32
}

func (c *countTask) Run(i, w int) { c.hits[i].Add(1); c.workers[w].Add(1) }

func TestRunEveryIndexOnce(t *testing.T) {
	for _, size := range []int{1, 2, 3, 8} {
		p := New(size)
		for rep := 0; rep < 200; rep++ {
			n := 1 + rep%37
			c := &countTask{hits: make([]atomic.Int32, n)}
			p.Run(c, n)
			for i := range c.hits {
				if got := c.hits[i].Load(); got != 1 {
					t.Fatalf("size %d n %d: index %d ran %d times", size, n, i, got)
				}
			}
		}
		p.Close()
	}
}

type nop struct{}

func (nop) Run(i, w int) {}

func TestRunAllocatesNothing(t *testing.T) {
	p := New(2)
	defer p.Close()
	task := &nop{}
	if a := testing.AllocsPerRun(100, func() { p.Run(task, 16) }); a != 0 {
		t.Fatalf("%v allocations per Run", a)
	}
}

func BenchmarkRunSmall(b *testing.B) {
	p := New(2)
	defer p.Close()
	for i := 0; i < b.N; i++ {
		p.Run(nop{}, 8)
	}
}

// spinTask burns about d iterations of work per index (no memory traffic).
type spinTask struct {
	d    int
	sink [8]uint64
}

func (s *spinTask) Run(i, w int) {
	x := uint64(i)
	for k := 0; k < s.d; k++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	s.sink[w] += x
}

// BenchmarkRunWork is a decode-like sequence: runs of 24 tasks of about a
// microsecond each, with a few microseconds of serial work between runs.
// ns/op is per run; compare size=1 with size=2 for the hand-off cost.
func BenchmarkRunWork(b *testing.B) {
	for _, size := range []int{1, 2, -2} {
		b.Run(map[int]string{1: "size=1", 2: "size=2", -2: "size=2-locked"}[size], func(b *testing.B) {
			if size < 0 { // the caller locked to its thread, as a GUI's main goroutine
				size = -size
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			p := New(size)
			defer p.Close()
			t := &spinTask{d: 1000}
			serial := &spinTask{d: 3000}
			for i := 0; i < b.N; i++ {
				p.Run(t, 24)
				serial.Run(0, 0)
			}
		})
	}
}

// TestRunFromLockedThread: a caller locked to its OS thread (a GUI main
// goroutine) runs every index once.
func TestRunFromLockedThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p := New(2)
	defer p.Close()
	for rep := 0; rep < 100; rep++ {
		c := &countTask{hits: make([]atomic.Int32, 24)}
		p.Run(c, 24)
		for i := range c.hits {
			if c.hits[i].Load() != 1 {
				t.Fatalf("index %d ran %d times", i, c.hits[i].Load())
			}
		}
	}
}

// TestMeasureGaps: the pool counts its passes and the caller's time
// between them, from zero when turned on, and nothing when off.
func TestMeasureGaps(t *testing.T) {
	p := New(2)
	defer p.Close()
	task := &spinTask{d: 10}
	p.Run(task, 4)
	p.MeasureGaps(true)
	for i := 0; i < 3; i++ {
		p.Run(task, 4)
		time.Sleep(2 * time.Millisecond)
	}
	p.Run(task, 4)
	g := p.Gaps()
	if g.Runs != 4 || g.Between < 6*time.Millisecond || g.Between > time.Second {
		t.Fatalf("gaps %+v, want 4 runs and at least 6 ms between them", g)
	}
	p.MeasureGaps(false)
	p.Run(task, 4)
	if g := p.Gaps(); g != (Gaps{}) {
		t.Fatalf("gaps %+v after turning them off", g)
	}
}
