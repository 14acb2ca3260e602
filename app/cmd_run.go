package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"

	"flowchat/engine"
	"flowchat/engine/chat"
	"flowchat/engine/sample"
)

func init() {
	register(command{name: "run", summary: "generate a continuation of one prompt (streamed to stdout)", run: cmdRun})
}

func cmdRun(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", stdout, stderr)
	var mf modelFlags
	var sf samplingFlags
	var rf remoteFlags
	mf.register(fs)
	mf.registerSpec(fs)
	sf.register(fs)
	rf.register(fs)
	prompt := fs.String("prompt", "", "the prompt text")
	fs.StringVar(prompt, "p", "", "shorthand for --prompt")
	var nFlag optInt
	fs.Var(&nFlag, "n", "tokens to generate: exactly `N` when given (end-of-generation tokens don't stop it, as in llama.cpp's reference runs); default: until end of generation")
	asChat := fs.Bool("chat", false, "wrap the prompt as a user message in the model's chat template")
	ignoreEOS := fs.Bool("ignore-eos", false, "don't stop at end-of-generation tokens")
	if err := parse(fs, args); err != nil {
		return err
	}
	n := new(int)
	*n = nFlag.or(-1)
	if *prompt == "" {
		if fs.NArg() == 0 {
			return fmt.Errorf("%w (flowchat run --prompt TEXT)", errNoPrompt)
		}
		*prompt = fs.Arg(0)
	}
	params, err := sf.params()
	if err != nil {
		return err
	}
	if rf.url != "" {
		return cmdRunRemote(&rf, mf.model, params, *prompt, *n, *asChat, *ignoreEOS, sf.explain, stdout, stderr)
	}
	m, err := mf.load()
	if err != nil {
		return err
	}
	defer m.Close()
	text := *prompt
	if *asChat && !m.Info.HasTemplate {
		fmt.Fprintf(stderr, "flowchat: %s has no chat template: --chat uses a generic format it may not know (a model not trained to chat continues the text rather than answering it)\n", m.Info.Name)
	}
	if *asChat {
		if text, err = m.RenderChat([]chat.Message{{Role: "user", Content: *prompt}}, true); err != nil {
			return err
		}
	}
	ids := m.Tok.Encode(text, !*asChat || !startsWithBOS(m, text), true)
	opt := engine.GenerateOptions{Sampling: params, IgnoreEOG: *ignoreEOS || *n >= 0}
	if *n >= 0 {
		opt.MaxTokens = *n
		if *n == 0 {
			return nil
		}
	}
	opt.OnPiece = func(s string) bool {
		io.WriteString(stdout, s)
		return true
	}
	if sf.explain {
		enc := json.NewEncoder(stderr)
		opt.OnExplain = func(e sample.Explanation) { enc.Encode(e) }
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	sess := m.NewSession(mf.ctx)
	st, err := generate(ctx, m, sess, ids, opt)
	if err != nil {
		return err
	}
	if f, ok := stdout.(*os.File); ok && isTerminal(f) {
		fmt.Fprintln(stdout)
	}
	fmt.Fprintf(stderr, "\n[prompt %d tokens, %.1f tok/s | generated %d tokens, %.1f tok/s | stop: %s]\n",
		st.PromptTokens, st.PromptTPS(), st.GenTokens, st.GenTPS(), st.StopReason)
	if s := specSummary(m, st); s != "" {
		fmt.Fprintln(stderr, s)
	}
	return nil
}

// startsWithBOS reports whether a rendered chat prompt already begins with
// the BOS token text (templates often emit it), so it is not added twice.
func startsWithBOS(m *engine.Model, text string) bool {
	bos := m.Tok.BOS()
	if bos < 0 {
		return false
	}
	b := m.Tok.Token(bos)
	return b != "" && len(text) >= len(b) && text[:len(b)] == b
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
