package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"

	"flowchat/app/serve"
	"flowchat/ui"
)

// guiServer is the GUI's "Local server" switch: flowchat serve's handlers
// over the model the chat window has loaded, on 127.0.0.1 (port 8080, or
// any free port when 8080 is taken). The server's requests and the chat's
// replies go through the model's one scheduler, batched together.
type guiServer struct {
	port int // 8080; tests use 0

	mu     sync.Mutex
	hs     *http.Server
	cancel context.CancelFunc
	done   chan error
}

var _ ui.LocalServer = (*guiServer)(nil)

// ErrNotLocal is returned when the engine is a remote server's.
var errNotLocal = errors.New("only a model loaded in flowchat can be served (a remote engine has its own server)")

func (s *guiServer) Start(e ui.Engine) (string, error) {
	g, ok := e.(*guiEngine)
	if !ok {
		return "", errNotLocal
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hs != nil {
		return "", errors.New("the local server is already running")
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", s.port))
	if err != nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := serve.New(serve.Config{Model: g.m, Backend: serve.NewModelBackend(g.m, 8, g.nCtx, 64),
		ModelID: modelID("", g.path), EndTexts: eogTexts(g.m), Log: log.New(io.Discard, "", 0)})
	s.hs = newHTTPServer(srv, log.New(io.Discard, "", 0))
	s.hs.BaseContext = func(net.Listener) context.Context { return ctx }
	s.cancel, s.done = cancel, make(chan error, 1)
	go func(hs *http.Server, done chan<- error) { done <- hs.Serve(ln) }(s.hs, s.done)
	return "http://" + ln.Addr().String() + "/v1", nil
}

// Stop cancels requests in flight (their generations stop at the next
// token) and closes the listener and connections.
func (s *guiServer) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hs == nil {
		return nil
	}
	s.cancel()
	err := s.hs.Close()
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	s.hs = nil
	return err
}
