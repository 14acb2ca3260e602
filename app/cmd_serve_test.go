package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"flowchat/engine/fixtures"
)

// TestServeCommandMatchesRun starts `flowchat serve` on a free loopback
// port and checks that a greedy chat completion is exactly what
// `flowchat run --greedy --chat` prints for the same prompt.
func TestServeCommandMatchesRun(t *testing.T) {
	model := fixtures.Path(t, "models/stories260K/stories260K-F32.gguf")
	want, stderr, code := run(t, "run", "--model", model, "--greedy", "--chat", "-n", "24", "-t", "1", "-p", "Once upon a time")
	if code != 0 {
		t.Fatalf("run: %s", stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	errc := make(chan error, 1)
	var log bytes.Buffer
	go func() {
		errc <- serveMain(ctx, []string{"--model", model, "--port", "0", "-t", "1", "--api-key", "k"}, &log, &log, func(a string) { addr <- a })
	}()
	var base string
	select {
	case base = <-addr:
	case err := <-errc:
		t.Fatalf("serve: %v\n%s", err, log.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}
	got := chatOnce(t, "http://"+base, `{"model":"stories260K-F32","messages":[{"role":"user","content":"Once upon a time"}],"temperature":0,"max_tokens":24,"ignore_eos":true}`)
	if got != want {
		t.Errorf("serve %q, run %q", got, want)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("serve after shutdown: %v", err)
	}
}

func chatOnce(t *testing.T, base, body string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 || len(out.Choices) != 1 {
		t.Fatalf("status %d, %v, %+v", resp.StatusCode, err, out)
	}
	return out.Choices[0].Message.Content
}

// TestServeRefusesPublicHostWithoutKey: exposing the model to the network
// takes a key or an explicit override, and the refusal says why.
func TestServeRefusesPublicHostWithoutKey(t *testing.T) {
	_, stderr, code := run(t, "serve", "--host", "0.0.0.0", "--api-key", "")
	if code != 2 || !strings.Contains(stderr, "--api-key") || !strings.Contains(stderr, "--insecure-no-key") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, host := range []string{"127.0.0.1", "::1", "localhost"} {
		if !isLoopback(host) {
			t.Errorf("%s is loopback", host)
		}
	}
	if isLoopback("0.0.0.0") || isLoopback("192.168.1.2") {
		t.Error("wildcard and LAN addresses are not loopback")
	}
}
