package model

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"flowchat/engine/device"
	"flowchat/engine/multigpu"
)

// TestConcurrentBitIdentical: with the devices running at once (tensor
// shards on their goroutines, layer and hybrid partitions pipelined over
// micro-batches of the prompt), the logits of a prompt and decode steps
// are bit for bit those of the sequential order, for layer partitions over
// 2 and 3 stand-ins, tensor partitions over 2 and 3, hybrid 2 × 2, and
// host blocks followed by a layer partition.
func TestConcurrentBitIdentical(t *testing.T) {
	for _, file := range []string{"models/stories260K/stories260K-F32.gguf", "arch/rand-llama-gqa-Q8_0.gguf"} {
		m := loadFixture(t, file)
		n := m.NLayer
		placements := []struct {
			name string
			p    func() Placement
		}{
			{"layer 2", func() Placement { return ByRanges(standIns(2), []int{n / 2, n - n/2}) }},
			{"layer 3", func() Placement { return ByRanges(standIns(3), []int{1, n - 2, 1}) }},
			{"host+layer 2", func() Placement {
				p := ByRanges(standIns(2), []int{n / 2, n - n/2 - 1})
				p.Layer = append([]int{-1}, p.Layer...)
				return p
			}},
			{"tensor 2", func() Placement { p, _ := planSplit(t, m, 2, SplitOptions{Mode: multigpu.Tensor}); return p }},
			{"hybrid 2×2", func() Placement {
				p, _ := planSplit(t, m, 4, SplitOptions{Mode: multigpu.Hybrid, TensorGroup: 2})
				return p
			}},
		}
		if m.NHeadKV >= 3 {
			placements = append(placements, struct {
				name string
				p    func() Placement
			}{"tensor 3", func() Placement { p, _ := planSplit(t, m, 3, SplitOptions{Mode: multigpu.Tensor}); return p }})
		}
		for _, pc := range placements {
			if n < 3 && (pc.name == "layer 3" || pc.name == "host+layer 2") {
				continue // a stage each needs a block
			}
			run := func(serial bool) [][]float32 {
				serialDevices = serial
				defer func() { serialDevices = false }()
				if err := m.Place(pc.p()); err != nil {
					t.Fatal(err)
				}
				defer m.Unplace()
				if !serial && pc.name != "tensor 2" && pc.name != "tensor 3" {
					if p := m.NewState(64, 16).pipelinePlan(len(prompt(m))); p == nil || len(p.stages) < 2 {
						t.Fatalf("%s %s: the prompt is not pipelined", file, pc.name)
					}
				}
				pr := prompt(m)
				got, _ := stateLogits(t, m.NewState(64, 16), pr, len(pr), 4, nil)
				return got
			}
			want, got := run(true), run(false)
			for i := range want {
				for j := range want[i] {
					if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
						t.Fatalf("%s %s, step %d: logit %d is %g at once, %g one after another", file, pc.name, i, j, got[i][j], want[i][j])
					}
				}
			}
		}
	}
}

// traced is a stand-in that records, on a shared counter, when each of
// its MatMuls starts and ends; a waiting one holds its first MatMuls until
// another traced device starts one (or a second passes), so that devices
// that run at once are seen overlapping however the goroutines are
// scheduled, and devices that run one after another are not.
type traced struct {
	*device.StandIn
	id    int
	log   *traceLog
	waits bool
}

type traceLog struct {
	clock   atomic.Int64
	started [8]atomic.Int64 // MatMuls started per device
	mu      sync.Mutex
	spans   []span
}

type span struct {
	dev        int
	start, end int64
}

func (d *traced) MatMul(t device.WeightType, w, x, y device.Mem, n, rows, cols int) error {
	l := d.log
	seen := make([]int64, len(l.started))
	for i := range seen {
		seen[i] = l.started[i].Load()
	}
	start := l.clock.Add(1)
	if l.started[d.id].Add(1) <= 3 && d.waits { // the first three: a wait costs a second when nothing runs alongside
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Microsecond) {
			other := false
			for i := range seen {
				other = other || (i != d.id && l.started[i].Load() > seen[i])
			}
			if other {
				break
			}
		}
	}
	err := d.StandIn.MatMul(t, w, x, y, n, rows, cols)
	end := l.clock.Add(1)
	l.mu.Lock()
	l.spans = append(l.spans, span{d.id, start, end})
	l.mu.Unlock()
	return err
}

// overlaps counts the pairs of MatMul spans of devices a and b that
// overlap on the log's clock.
func (l *traceLog) overlaps(a, b int) int {
	n := 0
	for _, x := range l.spans {
		for _, y := range l.spans {
			if x.dev == a && y.dev == b && x.start < y.end && y.start < x.end {
				n++
			}
		}
	}
	return n
}

func tracedDevices(n int, waits func(i int) bool) ([]device.Device, *traceLog) {
	l := &traceLog{}
	devs := make([]device.Device, n)
	for i := range devs {
		devs[i] = &traced{StandIn: device.NewStandIn(fmt.Sprintf("traced:%d", i), 0, 32), id: i, log: l, waits: waits(i)}
	}
	return devs, l
}

// TestShardsOverlap: the shards of a tensor split run at the same time:
// device 1's MatMuls overlap device 0's. Run one after another (the order
// before), they do not, which the same trace shows. Both devices hold
// their first MatMuls until the other starts one, so that concurrent
// shards overlap whatever the machine's load (with one device waiting,
// the other's tiny products could end first: it failed so on a busy machine).
func TestShardsOverlap(t *testing.T) {
	m := loadFixture(t, "models/stories260K/stories260K-F32.gguf")
	for _, serial := range []bool{false, true} {
		devs, log := tracedDevices(2, func(int) bool { return true })
		p, _, err := m.PlanSplit(devs, SplitOptions{Mode: multigpu.Tensor, Ctx: 64})
		if err != nil {
			t.Fatal(err)
		}
		serialDevices = serial
		if err := m.Place(p); err != nil {
			t.Fatal(err)
		}
		s := m.NewState(64, 16)
		if _, err := s.Forward([]int32{1}, false); err != nil {
			t.Fatal(err)
		}
		m.Unplace()
		serialDevices = false
		n := log.overlaps(0, 1)
		t.Logf("serial=%v: %d MatMul spans, %d overlapping pairs of devices 0 and 1", serial, len(log.spans), n)
		if !serial && n == 0 {
			t.Error("the tensor shards' MatMuls never overlapped")
		}
		if serial && n != 0 {
			t.Errorf("one after another, %d MatMul pairs overlap: the trace is wrong", n)
		}
	}
}

// TestPipelineOverlap: in a layer partition a prompt's micro-batches flow
// through the devices so that they work at once: device 1 (the second
// stage) runs MatMuls of a micro-batch while device 0 runs the next's.
// Without the pipeline they never overlap.
func TestPipelineOverlap(t *testing.T) {
	m := loadFixture(t, "models/stories260K/stories260K-F32.gguf")
	for _, serial := range []bool{false, true} {
		devs, log := tracedDevices(2, func(i int) bool { return i == 1 })
		serialDevices = serial
		if err := m.Place(ByRanges(devs, []int{m.NLayer / 2, m.NLayer - m.NLayer/2})); err != nil {
			t.Fatal(err)
		}
		s := m.NewState(64, 16)
		if _, err := s.Forward(prompt(m), false); err != nil {
			t.Fatal(err)
		}
		m.Unplace()
		serialDevices = false
		n := log.overlaps(0, 1)
		t.Logf("serial=%v: %d MatMul spans, %d overlapping pairs of devices 0 and 1", serial, len(log.spans), n)
		if !serial && n == 0 {
			t.Error("the stages' MatMuls never overlapped")
		}
		if serial && n != 0 {
			t.Errorf("one after another, %d MatMul pairs overlap: the trace is wrong", n)
		}
	}
}
