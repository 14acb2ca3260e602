package serve

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// stalled is a ResponseWriter whose writes block until release closes,
// like a client that stopped reading.
type stalled struct {
	*httptest.ResponseRecorder
	release chan struct{}
}

func (s *stalled) Write(b []byte) (int, error) {
	<-s.release
	return s.ResponseRecorder.Write(b)
}

// TestSSESendNeverBlocks: send runs while the backend holds the model's
// turn, so a client that does not read must not hold it up; everything
// queued still arrives, in order, once the client reads again.
func TestSSESendNeverBlocks(t *testing.T) {
	w := &stalled{httptest.NewRecorder(), make(chan struct{})}
	s := newSSE(w)
	sent := make(chan bool)
	go func() {
		ok := true
		for i := range 100 {
			ok = ok && s.send(map[string]int{"i": i})
		}
		sent <- ok
	}()
	select {
	case ok := <-sent:
		if !ok {
			t.Fatal("send reported a broken stream")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("send blocked on a client that does not read")
	}
	close(w.release)
	s.done()
	body := w.Body.String()
	if w.Code != http.StatusOK || strings.Count(body, "data: {") != 100 || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("status %d, body %q", w.Code, body)
	}
	if i, j := strings.Index(body, `{"i":7}`), strings.Index(body, `{"i":8}`); i < 0 || j < i {
		t.Fatal("events out of order")
	}
}

// TestSSEErrorBeforeOutput: an error before the first event is a plain
// JSON error response with its own status.
func TestSSEErrorBeforeOutput(t *testing.T) {
	w := httptest.NewRecorder()
	s := newSSE(w)
	s.fail(badRequest("x", "bad"))
	s.close()
	if w.Code != 400 || !strings.Contains(w.Body.String(), `"param":"x"`) {
		t.Fatalf("%d %s", w.Code, w.Body.String())
	}
}
