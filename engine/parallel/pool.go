// Package parallel is the engine's persistent worker pool.
//
// Decode is a chain of small operations (a few microseconds each); waking a
// parked goroutine costs tens of microseconds on the target machines, so
// workers spin between operations and park only after a quiet spell (between
// tokens). The caller of Run takes a share of the work too.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Task is a unit of parallel work: Run(i, worker) is called once for every
// i in [0, n); worker in [0, Pool.Size()) identifies the calling goroutine
// (for per-worker scratch buffers). Pass a pointer so that the call does not
// allocate.
type Task interface {
	Run(i, worker int)
}

// spinLimit is how many polls a worker makes before parking (~100 µs).
const spinLimit = 20000

// callerSpin is how many polls the caller of Run makes for the other
// threads' last tasks before it starts yielding (~100 µs).
const callerSpin = 1 << 16

// MaxTasks is the largest n Run accepts.
const MaxTasks = 1<<20 - 1

// Pool runs tasks on a fixed set of goroutines. Run must not be called
// concurrently with itself.
//
// Work is claimed through one atomic word holding (generation, n, next
// index), so a worker that wakes late can never claim an index of a finished
// Run: its compare-and-swap fails once the generation has moved on.
type Pool struct {
	size int

	task   Task          // stable while any index of the current Run is outstanding
	word   atomic.Uint64 // gen<<40 | n<<20 | next
	done   atomic.Int64  // indices finished in the current Run
	gen    uint64        // owned by Run
	closed atomic.Bool

	mu       sync.Mutex
	cond     *sync.Cond
	sleepers atomic.Int32
}

func pack(gen, n, i uint64) uint64 { return gen<<40 | n<<20 | i }

func unpack(w uint64) (gen, n, i uint64) { return w >> 40, w >> 20 & MaxTasks, w & MaxTasks }

// New starts a pool of size goroutines in all (size-1 workers plus the
// caller of Run). size < 1 means 1.
func New(size int) *Pool {
	if size < 1 {
		size = 1
	}
	p := &Pool{size: size}
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
	p.gen++
	p.publish(pack(p.gen, 0, 0))
}

func (p *Pool) publish(w uint64) {
	p.word.Store(w)
	if p.sleepers.Load() > 0 {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	}
}

// Run calls t.Run(i, w) for every i in [0, n) and returns when all are done.
func (p *Pool) Run(t Task, n int) {
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
	p.gen++
	p.publish(pack(p.gen, uint64(n), 0))
	for p.claim(0) {
	}
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

// claim runs one index of the current Run; false when none is left.
func (p *Pool) claim(worker int) bool {
	for {
		w := p.word.Load()
		_, n, i := unpack(w)
		if i >= n {
			return false
		}
		if p.word.CompareAndSwap(w, w+1) {
			p.task.Run(int(i), worker)
			p.done.Add(1)
			return true
		}
	}
}

func (p *Pool) worker(id int) {
	var seen uint64
	for {
		seen = p.wait(seen)
		if p.closed.Load() {
			return
		}
		for p.claim(id) {
		}
	}
}

// wait returns once the generation moves past seen: spinning first, then
// parking on the condition variable.
func (p *Pool) wait(seen uint64) uint64 {
	for i := 0; i < spinLimit; i++ {
		if g, _, _ := unpack(p.word.Load()); g != seen {
			return g
		}
	}
	p.mu.Lock()
	p.sleepers.Add(1)
	for {
		if g, _, _ := unpack(p.word.Load()); g != seen {
			p.sleepers.Add(-1)
			p.mu.Unlock()
			return g
		}
		p.cond.Wait()
	}
}
