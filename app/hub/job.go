package hub

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Job is one download job. Its exported view is Event (Manager.Status).
type Job struct {
	m    *Manager
	path string // the job file

	emitMu sync.Mutex // held from a state change to the end of its OnEvent call, so events arrive in order

	mu      sync.Mutex
	rec     *jobRecord // persisted state; written only by the run goroutine, or after it stopped
	state   State
	err     error
	ev      Event                   // the latest progress
	cancel  context.CancelCauseFunc // set while a run goroutine exists
	stopped chan struct{}           // closed when that goroutine returns
	changed chan struct{}           // closed and replaced on every state change
}

func newJob(m *Manager, rec *jobRecord, path string) *Job {
	j := &Job{m: m, rec: rec, path: path, changed: make(chan struct{})}
	j.ev = Event{JobID: rec.ID, Name: rec.Spec.Name, ETA: -1}
	for _, f := range rec.Spec.Files {
		j.ev.Total += f.Size
	}
	return j
}

// start launches the run goroutine unless one is running or the job is
// done.
func (j *Job) start() {
	j.mu.Lock()
	if j.cancel != nil || j.state == Done || j.state == Canceled {
		j.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	j.cancel, j.stopped = cancel, make(chan struct{})
	j.setStateLocked(Queued, nil)
	go j.run(ctx, j.stopped)
	j.unlockAndEmit(true)
}

// stop cancels the run goroutine with cause (ErrPaused or ErrCanceled) and
// waits for it; a canceled job's files are then deleted.
func (j *Job) stop(cause error) {
	j.mu.Lock()
	cancel, stopped := j.cancel, j.stopped
	j.mu.Unlock()
	if cancel != nil {
		cancel(cause)
		<-stopped
	}
	if errors.Is(cause, ErrCanceled) {
		j.removeFiles()
		j.setState(Canceled, ErrCanceled)
		return
	}
	j.mu.Lock()
	emit := !j.state.Final()
	if emit {
		j.setStateLocked(Paused, ErrPaused)
	}
	j.unlockAndEmit(emit)
}

func (j *Job) run(ctx context.Context, stopped chan struct{}) {
	defer close(stopped)
	err := j.acquireAndRun(ctx)
	j.mu.Lock()
	j.cancel = nil
	cause := context.Cause(ctx)
	switch {
	case err == nil:
		j.setStateLocked(Done, nil)
	case errors.Is(cause, ErrCanceled):
		j.unlockAndEmit(false) // stop() deletes the files, then says Canceled
		return
	case errors.Is(cause, ErrPaused):
		j.setStateLocked(Paused, ErrPaused)
	default:
		j.setStateLocked(Failed, err)
	}
	j.unlockAndEmit(true)
}

func (j *Job) acquireAndRun(ctx context.Context) error {
	select {
	case j.m.sem <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-j.m.sem }()
	if err := j.checkDisk(); err != nil {
		return err
	}
	for i := range j.rec.Spec.Files {
		if j.alreadyHere(i) {
			continue
		}
		if err := j.fetchWithRetries(ctx, i); err != nil {
			return err
		}
	}
	if err := os.Remove(j.path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("hub: %w", err)
	}
	return nil
}

// finalPath is where file i ends up; partPath is where it grows.
func (j *Job) finalPath(i int) string {
	return filepath.Join(j.rec.Spec.Dir, filepath.FromSlash(j.rec.Spec.Files[i].Path))
}

func (j *Job) partPath(i int) string { return j.finalPath(i) + ".part" }

// bytesOnDisk counts what a restored job already has: finished files whole,
// the others as far as their .part files go.
func (j *Job) bytesOnDisk() int64 {
	var n int64
	for i := range j.rec.Spec.Files {
		if j.finalPresent(i) {
			n += j.rec.Spec.Files[i].Size
		} else if st, err := os.Stat(j.partPath(i)); err == nil {
			n += st.Size()
		}
	}
	return n
}

func (j *Job) finalPresent(i int) bool {
	st, err := os.Stat(j.finalPath(i))
	return err == nil && (j.rec.Spec.Files[i].Size == 0 || st.Size() == j.rec.Spec.Files[i].Size)
}

// alreadyHere reports whether file i is in place: finished by this job, or
// present from before (a pull repeated after its job file was removed) and
// matching its hash.
func (j *Job) alreadyHere(i int) bool {
	if !j.finalPresent(i) {
		return false
	}
	if j.rec.Files[i].Done {
		return true
	}
	if verify(j.finalPath(i), j.rec.Spec.Files[i]) != nil {
		return false
	}
	j.rec.Files[i].Done = true
	j.save()
	return true
}

// checkDisk compares the bytes still to fetch with the free space.
func (j *Job) checkDisk() error {
	var need uint64
	for i, f := range j.rec.Spec.Files {
		if j.rec.Files[i].Done {
			continue
		}
		have := int64(0)
		if st, err := os.Stat(j.partPath(i)); err == nil {
			have = st.Size()
		}
		need += uint64(max(f.Size-have, 0))
	}
	free, err := j.m.o.FreeDisk(j.rec.Spec.Dir)
	if err != nil || need == 0 {
		return nil // unknown: write errors will tell
	}
	if need+j.m.o.DiskReserve > free {
		return fmt.Errorf("%w for %s: it needs %s more (plus %s kept free), but %s has %s free",
			ErrDiskFull, j.rec.Spec.Name, HumanBytes(need), HumanBytes(j.m.o.DiskReserve), j.rec.Spec.Dir, HumanBytes(free))
	}
	return nil
}

// removeFiles deletes the job's .part files, its finished files and its
// job file (used by Cancel, after the run goroutine stopped).
func (j *Job) removeFiles() {
	for i := range j.rec.Spec.Files {
		os.Remove(j.partPath(i))
		if j.rec.Files[i].Done {
			os.Remove(j.finalPath(i))
		}
	}
	os.Remove(j.path)
}

// save writes the job file.
func (j *Job) save() error { return saveRecord(j.path, j.rec) }

func (j *Job) setState(s State, err error) {
	j.mu.Lock()
	j.setStateLocked(s, err)
	j.unlockAndEmit(true)
}

// setStateLocked changes the state; the caller must then call
// unlockAndEmit(true).
func (j *Job) setStateLocked(s State, err error) {
	j.state, j.err = s, err
	j.ev.State, j.ev.Err = s, err
	if s != Running {
		j.ev.Speed, j.ev.ETA = 0, -1
	}
	if s != Retrying {
		j.ev.RetryIn = 0
	}
	close(j.changed)
	j.changed = make(chan struct{})
}

// unlockAndEmit releases j.mu and, if emit, hands the current event to
// OnEvent outside the lock but in order.
func (j *Job) unlockAndEmit(emit bool) {
	f := j.m.o.OnEvent
	if !emit || f == nil {
		j.mu.Unlock()
		return
	}
	ev := j.ev
	j.emitMu.Lock()
	j.mu.Unlock()
	defer j.emitMu.Unlock()
	f(ev)
}

// progress updates the event and emits it when emit is set.
func (j *Job) progress(update func(*Event), emit bool) {
	j.mu.Lock()
	update(&j.ev)
	j.unlockAndEmit(emit)
}

// finished reports a Done or Canceled job, which start leaves alone.
func (j *Job) finished() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state == Done || j.state == Canceled
}

func (j *Job) snapshot() Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.ev
}

func (j *Job) wait() (State, error, <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state, j.err, j.changed
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
