package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"flowchat/engine/fixtures"
)

// TestBenchURL loads a running `flowchat serve` with `bench --url`: every
// request completes with its -n tokens; a wrong key fails the command.
func TestBenchURL(t *testing.T) {
	model := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	errc := make(chan error, 1)
	var log bytes.Buffer
	go func() {
		errc <- serveMain(ctx, []string{"--model", model, "--port", "0", "-t", "1", "--api-key", "k", "--parallel", "2"}, &log, &log, func(a string) { addr <- a })
	}()
	var base string
	select {
	case base = <-addr:
	case err := <-errc:
		t.Fatalf("serve: %v\n%s", err, log.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}
	out, stderr, code := run(t, "bench", "--url", "http://"+base, "--api-key", "k", "--clients", "2", "--requests", "4", "-n", "8")
	if code != 0 || !strings.Contains(out, "4 completed, 0 refused, 0 errors") || !strings.Contains(out, ": 32 tokens") {
		t.Errorf("bench --url: exit %d\n%s%s", code, out, stderr)
	}
	if _, stderr, code := run(t, "bench", "--url", "http://"+base, "--api-key", "wrong", "--requests", "1", "-n", "4"); code == 0 || !strings.Contains(stderr, "401") {
		t.Errorf("a wrong key: exit %d, %s", code, stderr)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("serve after shutdown: %v", err)
	}
}
