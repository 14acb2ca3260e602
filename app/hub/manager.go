package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// State is where a download job is.
type State int

const (
	Queued    State = iota // waiting for a free slot
	Running                // transferring
	Retrying               // waiting before the next attempt after a transient error
	Verifying              // hashing a finished file
	Paused                 // stopped by the user or by Close; resumable
	Done                   // every file verified and in place
	Failed                 // stopped by an error that retrying cannot fix
	Canceled               // stopped and its files deleted
)

func (s State) String() string {
	return [...]string{"queued", "downloading", "retrying", "verifying", "paused", "done", "failed", "canceled"}[s]
}

// Final reports whether the job will not move by itself any more.
func (s State) Final() bool { return s >= Paused }

// Event reports a job's progress. Byte counts are for the whole job.
type Event struct {
	JobID    string
	Name     string
	State    State
	File     string // the file being transferred
	FileDone int64
	FileSize int64
	Done     int64
	Total    int64         // 0 when sizes are unknown
	Speed    float64       // bytes per second, smoothed over a few seconds
	ETA      time.Duration // -1 when unknown
	Attempt  int           // of the current file, from 1
	RetryIn  time.Duration // with Retrying
	Err      error         // with Failed, and the transient error with Retrying
}

// ManagerOptions configure a Manager. Zero fields take the defaults.
type ManagerOptions struct {
	Client       *Client
	Concurrency  int           // jobs transferring at once; default 2
	StallTimeout time.Duration // no byte for this long restarts the request; default 30s
	MaxAttempts  int           // attempts per file without progress before giving up; default 8
	BackoffMin   time.Duration // first retry delay; default 1s (doubling, with jitter)
	BackoffMax   time.Duration // default 60s
	// ProgressEvery throttles Running events; default 250ms.
	ProgressEvery time.Duration
	// OnEvent receives every event, in order per job, from the jobs'
	// goroutines. It must return quickly (a GUI posts to its own thread; a
	// terminal redraws) and must not call Pause, Resume or Cancel itself.
	OnEvent func(Event)
	// FreeDisk reports free bytes for a directory; default FreeDisk.
	FreeDisk func(dir string) (uint64, error)
	// DiskReserve is kept free beyond the job's bytes; default 256 MiB.
	DiskReserve uint64

	// wrapWriter lets tests put a size-limited writer under the .part file.
	wrapWriter func(io.Writer) io.Writer
}

// Manager runs download jobs.
type Manager struct {
	o   ManagerOptions
	sem chan struct{}

	mu   sync.Mutex
	jobs map[string]*Job
}

// NewManager makes a manager; it starts nothing until Add or Resume.
func NewManager(o ManagerOptions) *Manager {
	if o.Client == nil {
		o.Client = NewClient(Options{})
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.StallTimeout, 30*time.Second)
	def(&o.BackoffMin, time.Second)
	def(&o.BackoffMax, 60*time.Second)
	def(&o.ProgressEvery, 250*time.Millisecond)
	if o.Concurrency <= 0 {
		o.Concurrency = 2
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 8
	}
	if o.FreeDisk == nil {
		o.FreeDisk = FreeDisk
	}
	if o.DiskReserve == 0 {
		o.DiskReserve = 256 << 20
	}
	return &Manager{o: o, sem: make(chan struct{}, o.Concurrency), jobs: map[string]*Job{}}
}

// Add starts downloading spec, or resumes the same job left by an earlier
// run (same repo, revision and files into the same directory), and returns
// its id.
func (m *Manager) Add(spec JobSpec) (string, error) {
	if err := spec.validate(); err != nil {
		return "", err
	}
	if err := os.MkdirAll(spec.Dir, 0o755); err != nil {
		return "", fmt.Errorf("hub: %w", err)
	}
	j, err := m.job(spec)
	if err != nil {
		return "", err
	}
	j.start()
	return j.rec.ID, nil
}

// job returns the job for spec: already known, loaded from its job file,
// or new.
func (m *Manager) job(spec JobSpec) (*Job, error) {
	id := spec.ID()
	m.mu.Lock()
	defer m.mu.Unlock()
	// A finished or canceled job is replaced: pulling again re-checks the
	// files (and fetches any that were deleted since).
	if j, ok := m.jobs[id]; ok && j.rec.Spec.Dir == spec.Dir && !j.finished() {
		return j, nil
	}
	path := jobFilePath(spec.Dir, id)
	rec, err := loadRecord(path)
	if err != nil {
		rec = &jobRecord{Version: 1, ID: id, Spec: spec, Files: make([]fileRecord, len(spec.Files))}
		if err := saveRecord(path, rec); err != nil {
			return nil, err
		}
	}
	j := newJob(m, rec, path)
	m.jobs[id] = j
	return j, nil
}

// Restore finds the unfinished jobs an earlier run left under dir (job
// files beside .part files) and registers them as paused; Resume starts
// them. It returns their ids.
func (m *Manager) Restore(dir string) ([]string, error) {
	var ids []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(d.Name(), jobFileSuffix) {
			return nil
		}
		rec, err := loadRecord(p)
		if err != nil {
			return nil // not ours or damaged: leave it alone
		}
		m.mu.Lock()
		if _, ok := m.jobs[rec.ID]; !ok {
			j := newJob(m, rec, p)
			j.state, j.ev.State = Paused, Paused
			j.ev.Done = j.bytesOnDisk()
			m.jobs[rec.ID] = j
		}
		m.mu.Unlock()
		ids = append(ids, rec.ID)
		return nil
	})
	sort.Strings(ids)
	return ids, err
}

func (m *Manager) get(id string) (*Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[id]
	if !ok {
		return nil, fmt.Errorf("hub: no download %q", id)
	}
	return j, nil
}

// Pause stops a job, keeping its .part files; Resume continues it.
func (m *Manager) Pause(id string) error {
	j, err := m.get(id)
	if err != nil {
		return err
	}
	j.stop(ErrPaused)
	return nil
}

// Resume restarts a paused or failed job from where it stopped.
func (m *Manager) Resume(id string) error {
	j, err := m.get(id)
	if err != nil {
		return err
	}
	j.start()
	return nil
}

// Cancel stops a job and deletes everything it wrote.
func (m *Manager) Cancel(id string) error {
	j, err := m.get(id)
	if err != nil {
		return err
	}
	j.stop(ErrCanceled)
	return nil
}

// Status returns a job's latest event.
func (m *Manager) Status(id string) (Event, error) {
	j, err := m.get(id)
	if err != nil {
		return Event{}, err
	}
	return j.snapshot(), nil
}

// Jobs returns the latest event of every job, by name.
func (m *Manager) Jobs() []Event {
	m.mu.Lock()
	jobs := make([]*Job, 0, len(m.jobs))
	for _, j := range m.jobs {
		jobs = append(jobs, j)
	}
	m.mu.Unlock()
	out := make([]Event, len(jobs))
	for i, j := range jobs {
		out[i] = j.snapshot()
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// Wait blocks until the job is done (nil), failed (its error), paused
// (ErrPaused), canceled (ErrCanceled), or ctx ends.
func (m *Manager) Wait(ctx context.Context, id string) error {
	j, err := m.get(id)
	if err != nil {
		return err
	}
	for {
		st, err, ch := j.wait()
		if st.Final() {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close pauses every running job and waits for them to stop; their state
// stays on disk for the next run.
func (m *Manager) Close() {
	m.mu.Lock()
	jobs := make([]*Job, 0, len(m.jobs))
	for _, j := range m.jobs {
		jobs = append(jobs, j)
	}
	m.mu.Unlock()
	for _, j := range jobs {
		j.stop(ErrPaused)
	}
}

// Errors Wait returns for jobs stopped by the user.
var (
	ErrPaused   = errors.New("download paused")
	ErrCanceled = errors.New("download canceled")
)
