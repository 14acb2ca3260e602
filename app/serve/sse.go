package serve

import (
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
)

// sse writes a server-sent-event stream as OpenAI does: "data: JSON"
// events ending with "data: [DONE]". Headers go out with the first event,
// so an error before any output is still a plain JSON error response.
//
// Events are written by a goroutine of their own: send runs inside the
// engine's token callback, while the backend holds the model's turn, and
// a client that stops reading would otherwise stall every stream. send
// and fail may be called from several goroutines at once (the choices of
// a request with n > 1); close only after they have returned.
type sse struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	broken atomic.Bool // a write failed: the client is gone

	mu      sync.Mutex
	started bool     // guarded by mu: an event was queued; the writer goroutine owns w
	closed  bool     // guarded by mu: nothing more is sent
	queue   [][]byte // guarded by mu
	closing bool     // guarded by mu: write what is queued, then exit
	wake    chan struct{}
	exited  chan struct{}
}

func newSSE(w http.ResponseWriter) *sse {
	return &sse{w: w, rc: http.NewResponseController(w), wake: make(chan struct{}, 1), exited: make(chan struct{})}
}

// send queues one event; false means the client is gone and generation
// should stop.
func (s *sse) send(v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // our own response types always marshal
	}
	return s.enqueue(append(append([]byte("data: "), b...), '\n', '\n'))
}

func (s *sse) enqueue(b []byte) bool {
	if s.broken.Load() {
		return false
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	if !s.started {
		s.started = true
		go s.writer()
	}
	s.queue = append(s.queue, b)
	s.mu.Unlock()
	s.poke()
	return true
}

func (s *sse) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// writer sends the headers, then every queued event in order, flushing
// after each batch.
func (s *sse) writer() {
	defer close(s.exited)
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // keep reverse proxies from buffering tokens
	s.w.WriteHeader(http.StatusOK)
	for {
		s.mu.Lock()
		q, closing := s.queue, s.closing
		s.queue = nil
		s.mu.Unlock()
		s.writeAll(q)
		if closing && len(q) == 0 {
			return
		}
		if len(q) == 0 {
			<-s.wake
		}
	}
}

func (s *sse) writeAll(q [][]byte) {
	if len(q) == 0 || s.broken.Load() {
		return
	}
	for _, b := range q {
		if _, err := s.w.Write(b); err != nil {
			s.broken.Store(true)
			return
		}
	}
	if s.rc.Flush() != nil {
		s.broken.Store(true)
	}
}

// fail reports e: as the response when nothing was sent yet, otherwise
// as an error event that ends the stream.
func (s *sse) fail(e *apiError) {
	s.mu.Lock()
	if !s.started && !s.closed {
		s.closed = true // later sends are dropped: w holds the error response
		writeError(s.w, e)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.send(struct {
		Error *apiError `json:"error"`
	}{e})
	s.done()
}

// done ends the stream with [DONE] and waits until it is written.
func (s *sse) done() {
	s.enqueue([]byte("data: [DONE]\n\n"))
	s.close()
}

// close waits for the writer to finish what is queued; the handler must
// not return before, as w is invalid afterwards. Idempotent.
func (s *sse) close() {
	s.mu.Lock()
	if !s.started || s.closed {
		s.closed = true
		s.mu.Unlock()
		return
	}
	s.closed, s.closing = true, true
	s.mu.Unlock()
	s.poke()
	<-s.exited
}
