package ui_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"flowchat/app/store"
	"flowchat/ui"
)

// fakeServer records what the switch asks of it.
type fakeServer struct {
	serving ui.Engine
	starts  int
	stops   int
	fail    error
}

func (s *fakeServer) Start(e ui.Engine) (string, error) {
	if s.fail != nil {
		return "", s.fail
	}
	s.serving, s.starts = e, s.starts+1
	return "http://127.0.0.1:8080/v1", nil
}

func (s *fakeServer) Stop() error { s.serving, s.stops = nil, s.stops+1; return nil }

func serverHarness(t *testing.T, srv *fakeServer) *harness {
	dir := t.TempDir()
	loc := store.Locations{Conversations: filepath.Join(dir, "c"), Settings: filepath.Join(dir, "s.json")}
	return startHarnessWith(t, scripted("hi"), loc, func(d *ui.Deps) { d.Server = srv })
}

// TestLocalServerSwitch: the switch serves the loaded engine, shows the
// URL and a curl example against it, and stops with the switch or when
// the model is unloaded (then it cannot be switched on).
func TestLocalServerSwitch(t *testing.T) {
	srv := &fakeServer{}
	h := serverHarness(t, srv)
	sw := h.a.ServerToggle()
	if sw.Disabled() {
		t.Fatal("switch disabled with a model loaded")
	}
	test.Tap(sw)
	if srv.starts != 1 || srv.serving == nil || srv.serving.Info().Name != tinyModel.Name {
		t.Fatalf("start: %d starts, serving %v", srv.starts, srv.serving)
	}
	if !strings.Contains(h.a.ServerURL(), "http://127.0.0.1:8080/v1") || !strings.Contains(h.a.ServerExample(), "curl http://127.0.0.1:8080/v1/chat/completions") {
		t.Fatalf("shown: %q / %q", h.a.ServerURL(), h.a.ServerExample())
	}
	test.Tap(sw)
	if srv.stops != 1 || sw.Checked {
		t.Fatalf("switch off: %d stops, checked %v", srv.stops, sw.Checked)
	}
	test.Tap(sw)
	h.a.Unload()
	if srv.stops != 2 || sw.Checked || !sw.Disabled() {
		t.Fatalf("after unload: %d stops, checked %v, disabled %v", srv.stops, sw.Checked, sw.Disabled())
	}
}

// TestLocalServerStartError: a server that cannot start leaves the switch
// off and says why.
func TestLocalServerStartError(t *testing.T) {
	srv := &fakeServer{fail: errors.New("port 8080 is taken")}
	h := serverHarness(t, srv)
	test.Tap(h.a.ServerToggle())
	if h.a.ServerToggle().Checked {
		t.Fatal("switch on after a failed start")
	}
	if !strings.Contains(h.a.StatusMessage(), "port 8080 is taken") {
		t.Fatalf("status %q", h.a.StatusMessage())
	}
}
