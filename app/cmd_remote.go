package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"flowchat/app/remote"
	"flowchat/app/store"
	"flowchat/engine/chat"
	"flowchat/engine/sample"
)

// remoteFlags send chat's and run's requests to an OpenAI-compatible
// server instead of the local engine; --model then names the server's
// model.
type remoteFlags struct {
	url, key, dialect string
}

func (r *remoteFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.url, "remote", "", "generate on a remote OpenAI-compatible server (vLLM, llama-server, Ollama, flowchat serve…): its base URL, or the name of an endpoint saved in the app; --model then names the server's model")
	fs.StringVar(&r.key, "api-key", "", "API key for --remote (default: $FLOWCHAT_API_KEY, else the saved endpoint's key); the environment variable keeps it out of the process list")
	fs.StringVar(&r.dialect, "dialect", "auto", "--remote server dialect: auto (detect), openai, vllm, llama.cpp, ollama or flowchat")
}

// client opens the server --remote names: a URL, or a saved endpoint.
func (r *remoteFlags) client() (*remote.Client, error) {
	url, key, dialect := r.url, r.key, r.dialect
	if !strings.Contains(url, "://") {
		e, k, err := savedEndpoint(url)
		if err != nil {
			return nil, err
		}
		url = e.BaseURL
		if dialect == "auto" {
			dialect = e.Dialect
		}
		if key == "" {
			key = k
		}
	}
	if key == "" {
		key = os.Getenv("FLOWCHAT_API_KEY")
	}
	d, err := remote.ParseDialect(dialect)
	if err != nil {
		return nil, fmt.Errorf("%w: --dialect: %v", errUsage, err)
	}
	c, err := remote.New(url, key)
	if err != nil {
		return nil, fmt.Errorf("%w: --remote: %v", errUsage, err)
	}
	c.Dialect = d
	return c, nil
}

// savedEndpoint finds an endpoint of the settings by name, with its key.
func savedEndpoint(name string) (store.Endpoint, string, error) {
	loc := store.DefaultLocations()
	s, err := store.SettingsFile{Path: loc.Settings}.Load()
	if err != nil {
		return store.Endpoint{}, "", err
	}
	e, ok := s.Endpoint(name)
	if !ok {
		var names []string
		for _, e := range s.Endpoints {
			names = append(names, e.Name)
		}
		return e, "", fmt.Errorf("%w: --remote %q is neither a URL (http://HOST:PORT) nor a saved endpoint (saved: %s)",
			errUsage, name, strings.Join(append(names, "none")[:max(len(names), 1)], ", "))
	}
	key, err := store.Keys{Dir: loc.Keys}.Load(e.ID)
	return e, key, err
}

// noteDropped tells the user which of their settings the server ignores.
func noteDropped(w io.Writer, d remote.Dialect, dropped []remote.Unsupported) {
	for _, u := range dropped {
		fmt.Fprintf(w, "note: %s not sent to this %s server: %s\n", u.Param, d, u.Reason)
	}
}

// cmdRunRemote is `flowchat run --remote`: the prompt is continued as it
// is through the server's text completions, or sent as a user message
// with --chat; -n N asks for N tokens past end-of-generation where the
// server can.
func cmdRunRemote(rf *remoteFlags, model string, params sample.Params, prompt string, n int, asChat, ignoreEOS, explain bool, stdout, stderr io.Writer) error {
	if model == "" {
		return fmt.Errorf("%w: --remote needs --model, the name of one of the server's models", errUsage)
	}
	if n == 0 {
		return nil
	}
	c, err := rf.client()
	if err != nil {
		return err
	}
	req := remote.Request{Model: model, Sampling: params, MaxTokens: max(n, 0), IgnoreEOS: ignoreEOS || n > 0}
	if asChat {
		req.Messages = []remote.Message{{Role: "user", Content: prompt}}
	} else {
		req.Prompt = prompt
	}
	return runRemote(c, req, explain, stdout, stderr)
}

// runRemote is `flowchat run --remote`: the prompt is continued as it is
// (text completions), or, with --chat, sent as a user message.
func runRemote(c *remote.Client, req remote.Request, explain bool, stdout, stderr io.Writer) error {
	if explain {
		req.TopLogprobs = 5
	}
	enc := json.NewEncoder(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := c.Chat(ctx, req, func(p remote.Piece) {
		io.WriteString(stdout, p.Text)
		if explain {
			for _, t := range p.Logprobs {
				enc.Encode(t)
			}
		}
	})
	if f, ok := stdout.(*os.File); ok && isTerminal(f) {
		fmt.Fprintln(stdout)
	}
	noteDropped(stderr, res.Dialect, res.Dropped)
	if explain && !res.Logprobs && err == nil {
		fmt.Fprintln(stderr, "note: the server returned no top_logprobs, so there is nothing to explain")
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "\n[%s · %s | prompt %d tokens | generated %d tokens, %.1f tok/s | stop: %s]\n",
		c.Host(), req.Model, res.PromptTokens, res.GenTokens, remoteTPS(res), res.FinishReason)
	return nil
}

func remoteTPS(r remote.Result) float64 {
	gen := r.Total - r.TimeToFirst
	if r.GenTokens < 2 || gen <= 0 {
		return 0
	}
	return float64(r.GenTokens-1) / gen.Seconds()
}

// remoteTurn is one turn of `flowchat chat --remote`. A reply cut short
// (Ctrl-C, a dropped connection) is kept in the conversation and marked.
func (c *termChat) remoteTurn(user string) error {
	c.msgs = append(c.msgs, chat.Message{Role: "user", Content: user})
	req := c.remoteReq
	for _, m := range c.msgs {
		req.Messages = append(req.Messages, remote.Message{Role: m.Role, Content: m.Content})
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	res, err := c.remote.Chat(ctx, req, func(p remote.Piece) { io.WriteString(c.out, p.Text) })
	stop()
	fmt.Fprintln(c.out)
	if !c.noted {
		noteDropped(c.errOut, res.Dialect, res.Dropped)
		c.noted = true
	}
	if res.Text == "" && err != nil {
		c.msgs = c.msgs[:len(c.msgs)-1]
		return err
	}
	c.msgs = append(c.msgs, chat.Message{Role: "assistant", Content: res.Text})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			err = errors.New("stopped")
		}
		return fmt.Errorf("%w [partial reply kept]", err)
	}
	c.renderInPlace(res.Text)
	fmt.Fprintf(c.errOut, "[%s · %s | %d tokens, %.1f tok/s | stop: %s]\n", c.remote.Host(), req.Model, res.GenTokens, remoteTPS(res), res.FinishReason)
	return nil
}

// chatRemote is `flowchat chat --remote`.
func chatRemote(rf *remoteFlags, mf *modelFlags, params sample.Params, system string, maxTokens int, plain bool, stdout, stderr io.Writer) error {
	if mf.model == "" {
		return fmt.Errorf("%w: --remote needs --model, the name of one of the server's models", errUsage)
	}
	c, err := rf.client()
	if err != nil {
		return err
	}
	tc := &termChat{out: stdout, errOut: stderr}
	if !plain {
		tc.width, tc.height = terminalSize(stdout)
	}
	if maxTokens == 0 {
		maxTokens = 1024 // the server's context is not known here
	}
	tc.remoteReq = remote.Request{Model: mf.model, Sampling: params, MaxTokens: maxTokens}
	if system != "" {
		tc.msgs = append(tc.msgs, chat.Message{Role: "system", Content: system})
	}
	return remoteChat(c, tc, os.Stdin)
}

// remoteChat runs `flowchat chat --remote`, after checking that the
// server offers the model (a clear "unknown model" before the first turn).
func remoteChat(c *remote.Client, tc *termChat, in io.Reader) error {
	if err := c.CheckModel(context.Background(), tc.remoteReq.Model); err != nil {
		return err
	}
	tc.remote = c
	return tc.loop(in)
}

func init() {
	register(command{name: "remote", summary: "remote endpoints: list, add NAME URL, rm NAME, models URL|NAME", run: cmdRemote})
}

// cmdRemote manages the endpoints the app and --remote NAME use. A key
// is read from $FLOWCHAT_API_KEY or, with --api-key-stdin, from the first
// line of stdin, so it never appears in the process list or history.
func cmdRemote(args []string, stdout, stderr io.Writer) error {
	return cmdRemoteIn(args, os.Stdin, stdout, stderr)
}

func cmdRemoteIn(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("remote", stdout, stderr)
	dialect := fs.String("dialect", "", "add: the server's dialect (default: detect)")
	keyStdin := fs.Bool("api-key-stdin", false, "add: read the API key from the first line of stdin (default: $FLOWCHAT_API_KEY)")
	var rf remoteFlags
	fs.StringVar(&rf.key, "api-key", "", "models: API key for a URL")
	if err := parse(fs, args); err != nil {
		return err
	}
	loc := store.DefaultLocations()
	sf := store.SettingsFile{Path: loc.Settings}
	keys := store.Keys{Dir: loc.Keys}
	a := fs.Args()
	switch {
	case len(a) == 1 && a[0] == "list":
		return listEndpoints(sf, keys, stdout)
	case len(a) == 3 && a[0] == "add":
		key := os.Getenv("FLOWCHAT_API_KEY")
		if *keyStdin {
			line, err := readLine(stdin)
			if err != nil {
				return err
			}
			key = line
		}
		return addEndpoint(sf, keys, store.Endpoint{Name: a[1], BaseURL: a[2], Dialect: *dialect}, key, stdout)
	case len(a) == 2 && a[0] == "rm":
		return removeEndpoint(sf, keys, a[1], stdout)
	case len(a) == 2 && a[0] == "models":
		rf.url, rf.dialect = a[1], "auto"
		return listRemoteModels(&rf, stdout)
	}
	return fmt.Errorf("%w: flowchat remote list | add NAME URL [--dialect D] [--api-key-stdin] | rm NAME | models URL|NAME", errUsage)
}

func readLine(r io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, 64<<10))
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line), nil
}

func listEndpoints(sf store.SettingsFile, keys store.Keys, w io.Writer) error {
	s, err := sf.Load()
	if err != nil {
		return err
	}
	for _, e := range s.Endpoints {
		k, err := keys.Load(e.ID)
		has := map[bool]string{true: "key", false: "no key"}[k != ""]
		if err != nil {
			has = "key unreadable: " + err.Error()
		}
		fmt.Fprintf(w, "%-16s %-40s %-10s %s\n", e.Name, e.BaseURL, cmpOr(e.Dialect, "detect"), has)
	}
	return nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func addEndpoint(sf store.SettingsFile, keys store.Keys, e store.Endpoint, key string, w io.Writer) error {
	if _, err := remote.New(e.BaseURL, ""); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if _, err := remote.ParseDialect(e.Dialect); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	s, err := sf.Load()
	if err != nil {
		return err
	}
	if old, ok := s.Endpoint(e.Name); ok {
		e.ID = old.ID // replacing keeps the key file's name
	}
	if e, err = s.SetEndpoint(e); err != nil {
		return err
	}
	if err := keys.Save(e.ID, key); err != nil {
		return err
	}
	if err := sf.Save(s); err != nil {
		return err
	}
	fmt.Fprintf(w, "saved %s (%s)%s\n", e.Name, e.BaseURL, map[bool]string{true: " with its API key", false: ""}[key != ""])
	return nil
}

func removeEndpoint(sf store.SettingsFile, keys store.Keys, name string, w io.Writer) error {
	s, err := sf.Load()
	if err != nil {
		return err
	}
	e, ok := s.Endpoint(name)
	if !ok {
		return fmt.Errorf("%w: no endpoint called %q", errUsage, name)
	}
	s.RemoveEndpoint(e.ID)
	if err := sf.Save(s); err != nil {
		return err
	}
	fmt.Fprintf(w, "removed %s\n", name)
	return keys.Delete(e.ID)
}

func listRemoteModels(rf *remoteFlags, w io.Writer) error {
	c, err := rf.client()
	if err != nil {
		return err
	}
	ms, err := c.Models(context.Background())
	if err != nil {
		return err
	}
	for _, m := range ms {
		fmt.Fprintf(w, "%s\t%s\n", m.ID, m.OwnedBy)
	}
	return nil
}
