package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/charmbracelet/glamour"

	"flowchat/app/remote"
	"flowchat/engine"
	"flowchat/engine/chat"
)

func init() {
	register(command{name: "chat", summary: "chat in the terminal (markdown rendered with glamour)", run: cmdChat})
}

func cmdChat(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("chat", stderr)
	var mf modelFlags
	var sf samplingFlags
	var rf remoteFlags
	mf.register(fs)
	sf.register(fs)
	rf.register(fs)
	system := fs.String("system", "", "system prompt")
	maxTokens := fs.Int("n", 512, "maximum tokens per reply")
	plain := fs.Bool("plain", false, "print raw text instead of rendered markdown")
	if err := parse(fs, args); err != nil {
		return err
	}
	params, err := sf.params()
	if err != nil {
		return err
	}
	if rf.url != "" {
		return chatRemote(&rf, &mf, params, *system, *maxTokens, *plain, stdout, stderr)
	}
	m, err := mf.load()
	if err != nil {
		return err
	}
	defer m.Close()
	tc := &termChat{m: m, sess: m.NewSession(mf.ctx), out: stdout, errOut: stderr, plain: *plain || !isTTY(stdout)}
	tc.opt = engine.GenerateOptions{Sampling: params, MaxTokens: *maxTokens}
	if *system != "" {
		tc.msgs = append(tc.msgs, chat.Message{Role: "system", Content: *system})
	}
	return tc.loop(os.Stdin)
}

// render prints a reply again as rendered markdown, unless plain.
func (c *termChat) render(reply string) {
	if c.plain {
		return
	}
	if r, err := glamour.Render(reply, "auto"); err == nil {
		fmt.Fprint(c.out, "\n"+r)
	}
}

func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

// termChat is the terminal chat loop: read a line, generate, render.
type termChat struct {
	m      *engine.Model
	sess   *engine.Session
	msgs   []chat.Message
	opt    engine.GenerateOptions
	out    io.Writer
	errOut io.Writer
	plain  bool

	// remote, when set, answers instead of m (cmd_remote.go).
	remote    *remote.Client
	remoteReq remote.Request
	noted     bool // the parameters the server drops were listed
}

func (c *termChat) loop(in io.Reader) error {
	c.greet()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for {
		fmt.Fprint(c.out, "\n> ")
		if !sc.Scan() {
			fmt.Fprintln(c.out)
			return sc.Err()
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "/") {
			if c.command(line) {
				return nil
			}
			continue
		}
		if err := c.turn(line); err != nil {
			fmt.Fprintf(c.errOut, "error: %v\n", err)
		}
	}
}

func (c *termChat) greet() {
	if c.remote != nil {
		fmt.Fprintf(c.out, "flowchat — %s on %s. /help for commands, Ctrl-D to quit.\n", c.remoteReq.Model, c.remote)
		return
	}
	i := c.m.Info
	fmt.Fprintf(c.out, "flowchat — %s (%s, %s, %d-token context). /help for commands, Ctrl-D to quit.\n", i.Name, i.Arch, i.Quant, c.sess.Ctx())
	if !i.HasTemplate {
		fmt.Fprintln(c.out, "(this model has no chat template: it continues your text rather than answering it)")
	}
}

// command handles /help, /reset, /quit; it reports whether to quit.
func (c *termChat) command(line string) bool {
	switch strings.Fields(line)[0] {
	case "/quit", "/exit", "/bye":
		return true
	case "/reset", "/clear":
		c.msgs = c.msgs[:0]
		fmt.Fprintln(c.out, "(conversation cleared)")
	default:
		fmt.Fprintln(c.out, "/reset  start a new conversation\n/quit   leave")
	}
	return false
}

func (c *termChat) turn(user string) error {
	if c.remote != nil {
		return c.remoteTurn(user)
	}
	c.msgs = append(c.msgs, chat.Message{Role: "user", Content: user})
	prompt, err := c.m.RenderChat(c.msgs, true)
	if err != nil {
		c.msgs = c.msgs[:len(c.msgs)-1]
		return err
	}
	ids := c.m.Tok.Encode(prompt, !startsWithBOS(c.m, prompt), true)
	var reply strings.Builder
	opt := c.opt
	opt.OnPiece = func(s string) bool {
		reply.WriteString(s)
		io.WriteString(c.out, s) // stream raw text; re-rendered below
		return true
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	st, err := c.sess.Generate(ctx, ids, opt)
	stop()
	if err != nil {
		c.msgs = c.msgs[:len(c.msgs)-1]
		return err
	}
	c.msgs = append(c.msgs, chat.Message{Role: "assistant", Content: reply.String()})
	fmt.Fprintln(c.out)
	c.render(reply.String())
	note := ""
	if st.StopReason == "context" {
		note = " — the context is full; /reset to start over"
	}
	fmt.Fprintf(c.errOut, "[%d tokens, %.1f tok/s, %d/%d context used%s]\n", st.GenTokens, st.GenTPS(), c.sess.Used(), c.sess.Ctx(), note)
	return nil
}
