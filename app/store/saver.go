package store

import "sync"

// Saver writes conversations and settings on its own goroutine, so that
// the UI never waits for a disk. Writes of the same conversation coalesce:
// only the newest snapshot queued is written.
type Saver struct {
	dir      *Dir
	settings SettingsFile
	onErr    func(error) // called on the saving goroutine

	mu       sync.Mutex
	cond     *sync.Cond // signals changes of queue, pendingSet and busy
	queue    map[string]*saveOp
	order    []string // conversation ids in first-queued order
	pendingS *Settings
	busy     bool
	closed   bool
}

type saveOp struct {
	conv   *Conversation // nil: delete
	thens  []func()      // run after the write
	delete bool
}

// NewSaver starts a saver; onErr receives every failed write.
func NewSaver(d *Dir, sf SettingsFile, onErr func(error)) *Saver {
	s := &Saver{dir: d, settings: sf, onErr: onErr, queue: map[string]*saveOp{}}
	s.cond = sync.NewCond(&s.mu)
	go s.loop()
	return s
}

// Save queues a snapshot of c (cloned here); then, if not nil, runs on the
// saving goroutine once a snapshot at least this new is on disk (never when
// the write fails).
func (s *Saver) Save(c *Conversation, then func()) {
	snap := c.Clone()
	s.enqueue(c.ID, func(op *saveOp) {
		op.conv, op.delete = snap, false
		if then != nil {
			op.thens = append(op.thens, then)
		}
	})
}

// Delete queues the removal of the conversation with id.
func (s *Saver) Delete(id string) {
	s.enqueue(id, func(op *saveOp) { op.conv, op.delete = nil, true })
}

// SaveSettings queues st (cloned here).
func (s *Saver) SaveSettings(st Settings) {
	c := st.Clone()
	s.mu.Lock()
	s.pendingS = &c
	s.cond.Broadcast()
	s.mu.Unlock()
}

func (s *Saver) enqueue(id string, edit func(*saveOp)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	op, ok := s.queue[id]
	if !ok {
		op = &saveOp{}
		s.queue[id] = op
		s.order = append(s.order, id)
	}
	edit(op)
	s.cond.Broadcast()
}

// Flush waits until everything queued so far is written.
func (s *Saver) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.order) > 0 || s.pendingS != nil || s.busy {
		s.cond.Wait()
	}
}

// Close flushes and stops the saving goroutine.
func (s *Saver) Close() {
	s.Flush()
	s.mu.Lock()
	s.closed = true
	s.cond.Broadcast()
	s.mu.Unlock()
}

func (s *Saver) loop() {
	for {
		s.mu.Lock()
		for len(s.order) == 0 && s.pendingS == nil && !s.closed {
			s.cond.Wait()
		}
		if s.closed && len(s.order) == 0 && s.pendingS == nil {
			s.mu.Unlock()
			return
		}
		work := s.take()
		s.busy = true
		s.mu.Unlock()

		work()

		s.mu.Lock()
		s.busy = false
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}

// take removes the next job from the queues; s.mu is held.
func (s *Saver) take() func() {
	if len(s.order) > 0 {
		id := s.order[0]
		s.order = s.order[1:]
		op := s.queue[id]
		delete(s.queue, id)
		return func() { s.run(id, op) }
	}
	st := *s.pendingS
	s.pendingS = nil
	return func() { s.report(s.settings.Save(st)) }
}

func (s *Saver) run(id string, op *saveOp) {
	var err error
	if op.delete {
		err = s.dir.Delete(id)
	} else {
		err = s.dir.Save(op.conv)
	}
	s.report(err)
	if err != nil {
		return // a journal waiting on this save must stay for recovery
	}
	for _, f := range op.thens {
		f()
	}
}

func (s *Saver) report(err error) {
	if err != nil && s.onErr != nil {
		s.onErr(err)
	}
}
