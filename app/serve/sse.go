package serve

import (
	"encoding/json"
	"net/http"
)

// sse writes a server-sent-event stream as OpenAI does: "data: JSON"
// events ending with "data: [DONE]". Headers go out with the first event,
// so an error before any output is still a plain JSON error response.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
	broken  bool // a write failed: the client is gone
}

func newSSE(w http.ResponseWriter) *sse { return &sse{w: w, rc: http.NewResponseController(w)} }

func (s *sse) start() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // keep reverse proxies from buffering tokens
	s.w.WriteHeader(http.StatusOK)
}

// send writes one event and flushes it; false means the client is gone
// and generation should stop.
func (s *sse) send(v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // our own response types always marshal
	}
	return s.write(append(append([]byte("data: "), b...), '\n', '\n'))
}

func (s *sse) write(b []byte) bool {
	if s.broken {
		return false
	}
	s.start()
	if _, err := s.w.Write(b); err != nil {
		s.broken = true
		return false
	}
	if err := s.rc.Flush(); err != nil {
		s.broken = true
	}
	return !s.broken
}

// fail reports e: as the response when nothing was sent yet, otherwise
// as an error event that ends the stream.
func (s *sse) fail(e *apiError) {
	if !s.started {
		writeError(s.w, e)
		return
	}
	s.send(struct {
		Error *apiError `json:"error"`
	}{e})
	s.done()
}

func (s *sse) done() { s.write([]byte("data: [DONE]\n\n")) }
