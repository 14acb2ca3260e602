package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"flowchat/app/remote"
	"flowchat/app/remote/remotetest"
	"flowchat/app/serve"
	"flowchat/app/store"
	"flowchat/engine"
	"flowchat/engine/sample"
)

func TestRemoteRunStreams(t *testing.T) {
	s := remotetest.New(remotetest.VLLM)
	defer s.Close()
	out, errOut, code := run(t, "run", "--remote", s.URL, "--model", "test-model", "-p", "Once", "--temp", "0.5", "--top-k", "0")
	if code != 0 || out != "Hello, world!" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "generated 4 tokens") || !strings.Contains(errOut, "stop: stop") {
		t.Errorf("stats: %s", errOut)
	}
	b := s.LastBody()
	if b["prompt"] != "Once" || b["temperature"] != 0.5 || b["top_k"] != -1.0 || b["stream"] != true {
		t.Errorf("request %v", b)
	}
	// vLLM has no typical-p: the user is told it was not sent.
	_, errOut, _ = run(t, "run", "--remote", s.URL, "--model", "test-model", "-p", "x", "--typical-p", "0.5")
	if !strings.Contains(errOut, "note: typical_p not sent to this vllm server: vLLM has no locally typical sampling") {
		t.Errorf("no note of the dropped parameter: %s", errOut)
	}
	// --chat sends a user message; --greedy is temperature 0.
	out, _, code = run(t, "run", "--remote", s.URL+"/v1", "--model", "test-model", "-p", "hi", "--chat", "--greedy")
	b = s.LastBody()
	if code != 0 || out != "Hello, world!" || b["temperature"] != 0.0 {
		t.Errorf("--chat --greedy: %d %q %v", code, out, b)
	}
	if msgs, _ := b["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["content"] != "hi" {
		t.Errorf("messages %v", b["messages"])
	}
}

// flowchatStandIn stands in for `flowchat serve` until it lands: the
// local engine with the demo model behind the flowchat dialect, reading
// the sampling parameters from the request under sample.Params' names.
func flowchatStandIn(t *testing.T) *remotetest.Server {
	path, err := demoModelPath()
	if err != nil {
		t.Fatal(err)
	}
	m, err := engine.Load(path, engine.LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	s := remotetest.New(remotetest.Flowchat, "stories260K")
	s.Generate = func(body map[string]any, emit func(string)) {
		p := sample.DefaultParams()
		b, _ := json.Marshal(body)
		if err := json.Unmarshal(b, &p); err != nil {
			t.Errorf("stand-in: %v", err)
			return
		}
		n, _ := body["max_tokens"].(float64)
		eos, _ := body["ignore_eos"].(bool)
		ids := m.Tok.Encode(body["prompt"].(string), true, true)
		opt := engine.GenerateOptions{Sampling: p, MaxTokens: int(n), IgnoreEOG: eos,
			OnPiece: func(s string) bool { emit(s); return true }}
		if _, err := m.NewSession(0).Generate(context.Background(), ids, opt); err != nil {
			t.Errorf("stand-in: %v", err)
		}
	}
	t.Cleanup(s.Close)
	return s
}

// TestRemoteGreedyRunEqualsLocal: greedy text through a flowchat server
// equals the local run.
func TestRemoteGreedyRunEqualsLocal(t *testing.T) {
	s := flowchatStandIn(t)
	args := []string{"-p", "Once upon a time", "--greedy", "-n", "40"}
	local, errOut, code := run(t, append([]string{"run", "-t", "1"}, args...)...)
	if code != 0 || len(local) < 20 {
		t.Fatalf("local run: %d %q %s", code, local, errOut)
	}
	got, errOut, code := run(t, append([]string{"run", "--remote", s.URL, "--model", "stories260K"}, args...)...)
	if code != 0 || got != local {
		t.Fatalf("remote run: exit %d\n got %q\nwant %q\n%s", code, got, local, errOut)
	}
	if b := s.LastBody(); b["decoding"] != "greedy" || b["temperature"] != 0.0 || b["max_tokens"] != 40.0 || b["ignore_eos"] != true {
		t.Errorf("request %v", b)
	}
}

func TestRemoteFailuresCLI(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := l.Addr().String()
	l.Close()
	s := remotetest.New(remotetest.LlamaCpp)
	defer s.Close()
	s.APIKey = "sk-right"
	cut := remotetest.New(remotetest.Ollama)
	defer cut.Close()
	cut.CutAfter = 2
	for _, c := range []struct {
		args        []string
		out, stderr string
	}{
		{[]string{"--remote", "http://" + dead}, "", "could not connect to " + dead},
		{[]string{"--remote", s.URL, "--api-key", "sk-wrong"}, "", "refused the API key (HTTP 401)"},
		{[]string{"--remote", cut.URL}, "Hello, ", "closed the connection in the middle of the reply; the partial reply is kept"},
		{[]string{"--remote", "saved-but-missing"}, "", "neither a URL"},
		{[]string{"--remote", s.URL, "--dialect", "tgi?"}, "", "unknown server dialect"},
	} {
		out, errOut, code := run(t, append([]string{"run", "--model", "test-model", "-p", "x"}, c.args...)...)
		if code == 0 || out != c.out || !strings.Contains(errOut, c.stderr) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", c.args, code, out, errOut, c.stderr)
		}
		if strings.Contains(errOut, "sk-wrong") {
			t.Errorf("the key leaked: %s", errOut)
		}
	}
	if _, errOut, code := run(t, "run", "--remote", s.URL, "-p", "x"); code != 2 || !strings.Contains(errOut, "--remote needs --model") {
		t.Errorf("no --model: %d %s", code, errOut)
	}
	t.Setenv("FLOWCHAT_API_KEY", "sk-right")
	if out, errOut, code := run(t, "run", "--remote", s.URL, "--model", "test-model", "-p", "x"); code != 0 || out != "Hello, world!" {
		t.Errorf("key from the environment: %d %q %s", code, out, errOut)
	}
}

// TestRemoteSavedEndpoint: --remote NAME uses an endpoint saved in the
// settings, with its key from the key file.
func TestRemoteSavedEndpoint(t *testing.T) {
	s := remotetest.New(remotetest.VLLM)
	defer s.Close()
	s.APIKey = "sk-saved"
	loc := store.DefaultLocations()
	var st store.Settings
	e, err := st.SetEndpoint(store.Endpoint{Name: "lab", BaseURL: s.URL, Dialect: "openai"})
	if err != nil {
		t.Fatal(err)
	}
	if err := (store.SettingsFile{Path: loc.Settings}).Save(st); err != nil {
		t.Fatal(err)
	}
	if err := (store.Keys{Dir: loc.Keys}).Save(e.ID, "sk-saved"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.SettingsFile{Path: loc.Settings}.Save(store.Settings{}) })
	out, errOut, code := run(t, "run", "--remote", "lab", "--model", "test-model", "-p", "x")
	if code != 0 || out != "Hello, world!" {
		t.Fatalf("%d %q %s", code, out, errOut)
	}
	// The saved dialect (openai) was used: no vLLM extras, no probing.
	if _, ok := s.LastBody()["top_k"]; ok || len(s.Requests()) != 1 {
		t.Errorf("requests %+v", s.Requests())
	}
	if filepath.Dir(loc.Keys) != filepath.Dir(loc.Settings) {
		t.Errorf("keys at %s, settings at %s", loc.Keys, loc.Settings)
	}
}

// TestRemoteChatLoop: the terminal chat sends the whole conversation each
// turn and keeps a cut reply, marked.
func TestRemoteChatLoop(t *testing.T) {
	s := remotetest.New(remotetest.Ollama, "llama3.2")
	defer s.Close()
	c, _ := remote.New(s.URL, "")
	var out, errOut strings.Builder
	tc := &termChat{out: &out, errOut: &errOut} // width 0: plain text
	tc.remoteReq = remote.Request{Model: "llama3.2", Sampling: sample.DefaultParams()}
	if err := remoteChat(c, tc, strings.NewReader("hi\nand again\n")); err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), "Hello, world!") != 2 || !strings.Contains(out.String(), "llama3.2 on "+s.URL) {
		t.Errorf("output:\n%s", out.String())
	}
	msgs, _ := s.LastBody()["messages"].([]any)
	if len(msgs) != 3 || msgs[1].(map[string]any)["content"] != "Hello, world!" {
		t.Errorf("second turn sent %v", msgs)
	}
	s.CutAfter = 1
	out.Reset()
	errOut.Reset()
	tc.remote = nil
	tc.msgs = nil
	if err := remoteChat(c, tc, strings.NewReader("hi\n")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "partial reply kept") || len(tc.msgs) != 2 || tc.msgs[1].Content != "Hello" {
		t.Errorf("cut reply: %q %+v", errOut.String(), tc.msgs)
	}
	tc.remoteReq.Model = "nope"
	if err := remoteChat(c, tc, strings.NewReader("")); err == nil || !strings.Contains(err.Error(), `"nope" is not among llama3.2`) {
		t.Errorf("unknown model: %v", err)
	}
}

// TestRemoteCommand: endpoints saved from the command line, the key from
// stdin into its 0600 file, then used by --remote NAME.
func TestRemoteCommand(t *testing.T) {
	s := remotetest.New(remotetest.LlamaCpp, "m.gguf")
	defer s.Close()
	s.APIKey = "sk-stdin"
	loc := store.DefaultLocations()
	t.Cleanup(func() { store.SettingsFile{Path: loc.Settings}.Save(store.Settings{}) })
	var out, errOut strings.Builder
	if err := cmdRemoteIn([]string{"add", "box", s.URL, "--api-key-stdin"}, strings.NewReader("sk-stdin\n"), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "saved box") || strings.Contains(out.String(), "sk-stdin") {
		t.Errorf("add said %q", out.String())
	}
	list, _, _ := run(t, "remote", "list")
	if !strings.Contains(list, "box") || !strings.Contains(list, s.URL) || strings.Contains(list, "no key") || strings.Contains(list, "sk-stdin") {
		t.Errorf("list: %q", list)
	}
	models, errs, code := run(t, "remote", "models", "box")
	if code != 0 || models != "m.gguf\tllamacpp\n" {
		t.Errorf("models: %d %q %s", code, models, errs)
	}
	got, errs, code := run(t, "run", "--remote", "box", "--model", "m.gguf", "-p", "x", "--explain-sampling")
	if code != 0 || got != "Hello, world!" || !strings.Contains(errs, "no top_logprobs") {
		t.Errorf("run: %d %q %s", code, got, errs)
	}
	s.Logprobs = true
	_, errs, _ = run(t, "run", "--remote", "box", "--model", "m.gguf", "-p", "x", "--chat", "--explain-sampling")
	if strings.Count(errs, `"top_logprobs":[`) != 4 {
		t.Errorf("explain: %s", errs)
	}
	if _, errs, code := run(t, "remote", "rm", "box"); code != 0 {
		t.Errorf("rm: %d %s", code, errs)
	}
	if _, errs, code := run(t, "remote", "models", "box"); code != 2 || !strings.Contains(errs, "neither a URL") {
		t.Errorf("after rm: %d %s", code, errs)
	}
	if _, errs, code := run(t, "remote", "add", "x", "not a url"); code != 2 || !strings.Contains(errs, "not an http") {
		t.Errorf("bad url: %d %s", code, errs)
	}
}

// TestRemoteAgainstFlowchatServe: the remote client against a real
// `flowchat serve` on loopback (the batching engine behind the HTTP API,
// not a stand-in): the dialect is detected as flowchat, and a greedy
// `run --remote` gives the local run's text exactly, as do two of them at
// once (batched together on the server).
func TestRemoteAgainstFlowchatServe(t *testing.T) {
	path, err := demoModelPath()
	if err != nil {
		t.Fatal(err)
	}
	m, err := engine.Load(path, engine.LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	srv := serve.New(serve.Config{Model: m, Backend: serve.NewModelBackend(m, 4, 0, 16), ModelID: "demo"})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c, err := remote.New(ts.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if d, err := c.Detect(context.Background()); err != nil || d != remote.Flowchat {
		t.Fatalf("dialect %q, %v; want flowchat", d, err)
	}
	args := []string{"-p", "Once upon a time", "--greedy", "-n", "40"}
	local, errOut, code := run(t, append([]string{"run", "-t", "1"}, args...)...)
	if code != 0 || len(local) < 20 {
		t.Fatalf("local run: %d %q %s", code, local, errOut)
	}
	outs := make([]string, 2)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, e, code := run(t, append([]string{"run", "--remote", ts.URL, "--model", "demo"}, args...)...)
			if code != 0 {
				t.Errorf("remote run %d: exit %d: %s", i, code, e)
			}
			outs[i] = out
		}()
	}
	wg.Wait()
	for i, got := range outs {
		if got != local {
			t.Fatalf("remote run %d against flowchat serve:\n got %q\nwant %q", i, got, local)
		}
	}
}
