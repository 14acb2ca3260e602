// Package parallel is the engine's persistent worker pool.
//
// Decode is a chain of small operations (a few microseconds each); waking a
// parked goroutine costs tens of microseconds on the target machines, so
// workers spin between operations and park only after a quiet spell
// (spinFor, between tokens). The caller of Run takes a share of the work too.
//
// Each goroutine owns a contiguous range of the indices and takes them from
// the front; one that runs out steals from the back of another's range. A
// matrix split into row chunks is so read by each thread as one sequential
// stream, which the kernels' prefetching of the next rows follows across
// chunks, and the threads still finish together. (Measured on TinyLlama
// Q4_0 decode it performs the same as dealing chunks out alternately.)
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Task is a unit of parallel work: Run(i, worker) is called once for every
// i in [0, n); worker in [0, Pool.Size()) identifies the calling goroutine
// (for per-worker scratch buffers). Pass a pointer so that the call does not
// allocate.
type Task interface {
	Run(i, worker int)
}

// spinFor is how long a worker polls for the next Run before parking. It
// must outlast the gaps inside a decode step (the caller's serial work
// between two parallel operations: norms, activation quantization, the
// sampler's bookkeeping), or every such gap costs a futex wake-up. It was
// a count of 20000 polls, meant as ~100 µs but ~10 µs on a Zen 5 core:
// TinyLlama Q4_0 generation at 2 threads went from 40–41 to 46–50 t/s
// with a longer spin (AMD EPYC VM, flowchat bench -p 0 -n 64 -t 2 -r 3,
// alternated runs).
const spinFor = 200 * time.Microsecond

// spinCheck is how many polls pass between two looks at the clock.
const spinCheck = 1024

// callerSpin is how many polls the caller of Run makes for the other
// threads' last tasks before it starts yielding (~100 µs).
const callerSpin = 1 << 16

// MaxTasks is the largest n Run accepts.
const MaxTasks = 1<<20 - 1

// Pool runs tasks on a fixed set of goroutines. Run must not be called
// concurrently with itself.
//
// Goroutine w's range is one atomic word holding (generation, front,
// back): the owner claims front, thieves claim back−1, both by
// compare-and-swap, so a goroutine that wakes late can never claim an index
// of a finished Run (the generation has moved on) and no index runs twice.
type Pool struct {
	size int

	task   Task          // stable while any index of the current Run is outstanding
	ranges []paddedRange // [size]
	closed atomic.Bool
	// gen, which the waiting workers poll, and done, which the workers
	// write and the caller polls, sit on lines of their own.
	_    [64]byte
	gen  atomic.Uint64 // generation of the current Run; workers poll it
	_    [56]byte
	done atomic.Int64 // indices finished in the current Run
	_    [56]byte

	mu       sync.Mutex
	cond     *sync.Cond
	sleepers atomic.Int32

	// The caller's own fields (MeasureGaps).
	gapsOn  bool
	gaps    Gaps
	lastEnd time.Time
}

// Gaps is what MeasureGaps counts: Runs, the passes since it was turned
// on, and Between, the caller's time from the end of one to the start of
// the next. That is the serial part of a decode step (norms, activation
// preparation, residual adds, the sampler), where the workers only wait:
// at t threads a step takes at least Between/steps plus its parallel work
// over t, however many threads there are.
type Gaps struct {
	Runs    int64
	Between time.Duration
}

// MeasureGaps turns the count of Gaps on (from zero) or off. Like Run, it
// belongs to the one caller.
func (p *Pool) MeasureGaps(on bool) {
	p.gapsOn, p.gaps, p.lastEnd = on, Gaps{}, time.Time{}
}

// Gaps returns the counts since MeasureGaps(true).
func (p *Pool) Gaps() Gaps { return p.gaps }

// paddedRange keeps each range word on its own cache line: the owner
// writes it at every claim.
type paddedRange struct {
	w atomic.Uint64 // gen<<40 | front<<20 | back
	_ [56]byte
}

func pack(gen, front, back uint64) uint64 { return gen<<40 | front<<20 | back }

func unpack(w uint64) (gen, front, back uint64) {
	return w >> 40, w >> 20 & MaxTasks, w & MaxTasks
}

// New starts a pool of size goroutines in all (size-1 workers plus the
// caller of Run). size < 1 means 1.
func New(size int) *Pool {
	if size < 1 {
		size = 1
	}
	p := &Pool{size: size, ranges: make([]paddedRange, size)}
	p.cond = sync.NewCond(&p.mu)
	for w := 1; w < size; w++ {
		go p.worker(w)
	}
	return p
}

// Size is the number of goroutines that run tasks, the caller included.
func (p *Pool) Size() int { return p.size }

// Close stops the workers.
func (p *Pool) Close() {
	p.closed.Store(true)
	p.publish(p.gen.Load() + 1)
}

func (p *Pool) publish(gen uint64) {
	p.gen.Store(gen)
	if p.sleepers.Load() > 0 {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	}
}

// Run calls t.Run(i, w) for every i in [0, n) and returns when all are done.
func (p *Pool) Run(t Task, n int) {
	if p.gapsOn {
		now := time.Now()
		if !p.lastEnd.IsZero() {
			p.gaps.Between += now.Sub(p.lastEnd)
		}
		p.gaps.Runs++
		p.run(t, n)
		p.lastEnd = time.Now()
		return
	}
	p.run(t, n)
}

func (p *Pool) run(t Task, n int) {
	if n <= 0 {
		return
	}
	if p.size == 1 || n == 1 {
		for i := 0; i < n; i++ {
			t.Run(i, 0)
		}
		return
	}
	if n > MaxTasks {
		panic("parallel: too many tasks")
	}
	p.task = t
	p.done.Store(0)
	gen := (p.gen.Load() + 1) & (1<<24 - 1)
	for w := range p.ranges {
		lo, hi := uint64(w*n/p.size), uint64((w+1)*n/p.size)
		p.ranges[w].w.Store(pack(gen, lo, hi))
	}
	p.publish(gen)
	p.work(gen, 0)
	// The tail (the other threads' last tasks) is microseconds: spin. Yield
	// only after a long wait: runtime.Gosched on a goroutine locked to its
	// thread (the main goroutine of a GUI program: GLFW locks it) costs a
	// hand-off through the scheduler each time, which made decode ~10%
	// slower there.
	for spins := 0; p.done.Load() < int64(n); spins++ {
		if spins >= callerSpin {
			runtime.Gosched()
		}
	}
}

// work runs the indices of generation gen that worker id can claim: its
// own range from the front, then the others' from the back. It counts its
// own range's indices into done once, when the range runs out, and each
// stolen one as it finishes: done is the one line every thread writes,
// and an add per index had every core take that line at every task (at 16
// threads, 16 writers for each of a decode step's ~50 tasks per matrix).
// The count goes in before the look at the others' ranges (15 lines at 16
// threads), which would otherwise delay the caller's last wait. A worker
// that ran nothing adds nothing, so no late add can fall into a later Run.
func (p *Pool) work(gen uint64, id int) {
	ran := int64(0)
	for p.claimFront(gen, id) {
		ran++
	}
	if ran > 0 {
		p.done.Add(ran)
	}
	for k := 1; k < p.size; k++ {
		v := (id + k) % p.size
		for p.claimBack(gen, v, id) {
			p.done.Add(1)
		}
	}
}

// claimFront runs the next index of worker id's own range; false when the
// range is empty or belongs to another generation.
func (p *Pool) claimFront(gen uint64, id int) bool {
	r := &p.ranges[id].w
	for {
		w := r.Load()
		g, f, b := unpack(w)
		if g != gen || f >= b {
			return false
		}
		if r.CompareAndSwap(w, pack(g, f+1, b)) {
			p.task.Run(int(f), id)
			return true
		}
	}
}

// claimBack runs the last index of worker v's range on worker id.
func (p *Pool) claimBack(gen uint64, v, id int) bool {
	r := &p.ranges[v].w
	for {
		w := r.Load()
		g, f, b := unpack(w)
		if g != gen || f >= b {
			return false
		}
		if r.CompareAndSwap(w, pack(g, f, b-1)) {
			p.task.Run(int(b-1), id)
			return true
		}
	}
}

func (p *Pool) worker(id int) {
	seen := p.gen.Load()
	for {
		seen = p.wait(seen)
		if p.closed.Load() {
			return
		}
		p.work(seen, id)
	}
}

// wait returns once the generation moves past seen: spinning first, then
// parking on the condition variable.
func (p *Pool) wait(seen uint64) uint64 {
	var start time.Time
	for i := 1; ; i++ {
		if g := p.gen.Load(); g != seen {
			return g
		}
		if i%spinCheck == 0 {
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > spinFor {
				break
			}
		}
	}
	p.mu.Lock()
	p.sleepers.Add(1)
	for {
		if g := p.gen.Load(); g != seen {
			p.sleepers.Add(-1)
			p.mu.Unlock()
			return g
		}
		p.cond.Wait()
	}
}
