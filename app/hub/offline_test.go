package hub

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"flowchat/app/hub/hubtest"
)

// closedEndpoint is an address on loopback where nothing listens.
func closedEndpoint(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// TestOfflineIsPlain: a hub that cannot be reached gives ErrOffline, and
// Message is one sentence saying so, with no Go error chain and no
// (URL-encoded) request address.
func TestOfflineIsPlain(t *testing.T) {
	ep := closedEndpoint(t)
	c := NewClient(Options{Endpoint: ep, NoToken: true})
	ctx := context.Background()
	_, searchErr := c.Search(ctx, SearchQuery{Text: "qwen instruct", Limit: 5})
	_, filesErr := c.ListFiles(ctx, "o/m-GGUF", "")
	for _, err := range []error{searchErr, filesErr, errors.Join(errors.New("outer"), filesErr)} {
		msg := Message(err)
		if !errors.Is(err, ErrOffline) || !strings.HasPrefix(msg, "You appear to be offline: "+strings.TrimPrefix(ep, "http://")+" cannot be reached.") {
			t.Errorf("err %v: message %q", err, msg)
		}
		for _, bad := range []string{"%", "http", "dial tcp", "Get ", "hub:"} {
			if strings.Contains(msg, bad) {
				t.Errorf("message %q contains %q", msg, bad)
			}
		}
	}
}

// TestOnlineErrorsAreNotOffline: answers from the hub, and cancellations,
// are not "offline".
func TestOnlineErrorsAreNotOffline(t *testing.T) {
	h := hubtest.New()
	defer h.Close()
	c := NewClient(Options{Endpoint: h.URL(), NoToken: true})
	_, err := c.ListFiles(context.Background(), "nobody/missing", "")
	if err == nil || errors.Is(err, ErrOffline) || Message(err) != err.Error() {
		t.Errorf("missing repo: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c = NewClient(Options{Endpoint: closedEndpoint(t), NoToken: true})
	if _, err := c.Search(ctx, SearchQuery{Text: "x"}); err == nil || errors.Is(err, ErrOffline) {
		t.Errorf("cancelled: %v", err)
	}
}
