package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/charmbracelet/glamour"
	"github.com/mattn/go-runewidth"
	"golang.org/x/term"

	"flowchat/app/presets"
	"flowchat/app/remote"
	"flowchat/engine"
	"flowchat/engine/chat"
)

func init() {
	register(command{name: "chat", summary: "chat in the terminal (markdown rendered with glamour)", run: cmdChat})
}

func cmdChat(args []string, stdout, stderr io.Writer) error {
	return chatWithNote(args, stdout, stderr, "")
}

// chatWithNote is the terminal chat, saying note on stderr once its flags
// are understood (the GUI's fallback without a display: a bad flag is
// then one error, not a promise of a chat that does not start).
func chatWithNote(args []string, stdout, stderr io.Writer, note string) error {
	fs := newFlags("chat", stdout, stderr)
	var mf modelFlags
	var sf samplingFlags
	var rf remoteFlags
	mf.register(fs)
	mf.registerSpec(fs)
	sf.register(fs)
	rf.register(fs)
	system := fs.String("system", "", "system prompt")
	maxTokens := fs.Int("n", 0, "maximum tokens per reply (default: a quarter of the context, at most 1024)")
	plain := fs.Bool("plain", false, "print raw text instead of rendered markdown")
	policy := fs.String("context-policy", policyDrop, "when the conversation outgrows the context: "+policyDrop+" (leave the oldest turns out), "+policyShift+" (also keep a reply going past a full context: the start stays, the oldest text after it leaves) or "+policyStop+" (say so; /reset to start over)")
	if err := parse(fs, args); err != nil {
		return err
	}
	io.WriteString(stderr, note)
	if *policy != policyDrop && *policy != policyStop && *policy != policyShift {
		return fmt.Errorf("%w: --context-policy %q: want %s, %s or %s", errUsage, *policy, policyDrop, policyShift, policyStop)
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
	tc := &termChat{m: m, sess: m.NewSession(mf.ctx), out: stdout, errOut: stderr, policy: *policy}
	if !*plain {
		tc.width, tc.height = terminalSize(stdout)
	}
	tc.opt = engine.GenerateOptions{Sampling: params, MaxTokens: *maxTokens, ContextShift: *policy == policyShift}
	if tc.opt.MaxTokens == 0 {
		tc.opt.MaxTokens = defaultReplyTokens(tc.sess.Ctx())
	}
	if *system != "" {
		tc.msgs = append(tc.msgs, chat.Message{Role: "system", Content: *system})
	}
	return tc.loop(os.Stdin)
}

// defaultReplyTokens is the reply length limit when none is given, the
// GUI's: a quarter of the context (at most 1024 tokens), so that one reply
// never fills the context and the conversation can go on.
func defaultReplyTokens(ctx int) int { return presets.MaxTokensFor(ctx) }

// The terminal chat's context policies, named as the GUI's (app/store).
const (
	policyDrop  = "drop-oldest"
	policyStop  = "stop"
	policyShift = "shift"
)

// terminalSize is w's size in character cells when it is a terminal, else
// 0, 0 (then replies are printed as plain text).
func terminalSize(w io.Writer) (width, height int) {
	f, ok := w.(*os.File)
	if !ok || !isTerminal(f) {
		return 0, 0
	}
	width, height, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0, 0
	}
	return width, height
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
	policy string // policyDrop or policyStop
	// width and height are the terminal's size in cells; 0 prints replies
	// as plain text (a pipe, or --plain).
	width, height int

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

// chatCommands are the slash commands, aliases after the name.
var chatCommands = []struct{ names, help string }{
	{"/help /?", "list these commands"},
	{"/reset /clear", "start a new conversation"},
	{"/quit /exit /bye", "leave (Ctrl-D too)"},
}

// command handles a slash command; it reports whether to quit.
func (c *termChat) command(line string) bool {
	name := strings.Fields(line)[0]
	switch name {
	case "/quit", "/exit", "/bye":
		return true
	case "/reset", "/clear":
		c.msgs = slices.DeleteFunc(c.msgs, func(m chat.Message) bool { return m.Role != "system" })
		fmt.Fprintln(c.out, "(conversation cleared)")
	case "/help", "/?":
		for _, cmd := range chatCommands {
			fmt.Fprintf(c.out, "%-18s %s\n", cmd.names, cmd.help)
		}
		fmt.Fprintf(c.out, "When the context is full: %s (--context-policy).\n", c.policy)
	default:
		fmt.Fprintf(c.out, "unknown command %s (/help lists the commands)\n", name)
	}
	return false
}

func (c *termChat) turn(user string) error {
	if c.remote != nil {
		return c.remoteTurn(user)
	}
	c.msgs = append(c.msgs, chat.Message{Role: "user", Content: user})
	ids, err := c.fit()
	if err != nil {
		c.msgs = c.msgs[:len(c.msgs)-1]
		return err
	}
	var reply strings.Builder
	opt := c.opt
	opt.OnPiece = func(s string) bool {
		reply.WriteString(s)
		io.WriteString(c.out, s)
		return true
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	st, err := generate(ctx, c.m, c.sess, ids, opt)
	stop()
	if err != nil {
		c.msgs = c.msgs[:len(c.msgs)-1]
		return err
	}
	c.msgs = append(c.msgs, chat.Message{Role: "assistant", Content: reply.String()})
	c.renderInPlace(reply.String())
	note := ""
	if st.StopReason == "length" { // cut mid-sentence: say why
		note = " — the reply limit; -n N sets it"
	}
	if st.StopReason == "context" {
		note = " — the context is full"
		if c.policy == policyStop {
			note += "; /reset to start over"
		}
	}
	if st.Shifted > 0 {
		note += fmt.Sprintf(" — %d of the oldest tokens left the context while replying", st.Shifted)
	}
	if st.Drafted > 0 {
		note += fmt.Sprintf(", drafted %d, kept %d (%.0f%%)", st.Drafted, st.DraftAccepted, 100*st.AcceptRate())
	}
	fmt.Fprintf(c.errOut, "[%d tokens, %.1f tok/s, %d/%d context used%s]\n", st.GenTokens, st.GenTPS(), c.sess.Used(), c.sess.Ctx(), note)
	return nil
}

// fit renders the conversation and tokenizes it, applying the context
// policy as the GUI does: under drop-oldest the oldest turns after the
// system prompt are left out until the prompt and room for a reply fit.
func (c *termChat) fit() ([]int32, error) {
	size := c.sess.Ctx()
	room := min(size/8, max(c.opt.MaxTokens, 1))
	dropped := 0
	defer func() {
		if dropped > 0 {
			fmt.Fprintf(c.errOut, "(the conversation outgrew the context: the %d oldest message(s) were left out)\n", dropped)
		}
	}()
	for {
		prompt, err := c.m.RenderChat(c.msgs, true)
		if err != nil {
			return nil, err
		}
		ids := c.m.Tok.Encode(prompt, !startsWithBOS(c.m, prompt), true)
		fits := len(ids)+room <= size
		if fits || c.policy == policyStop && len(ids) < size {
			return ids, nil
		}
		first := 0
		if c.msgs[0].Role == "system" {
			first = 1
		}
		if c.policy == policyStop || len(c.msgs)-first <= 1 {
			return nil, fmt.Errorf("%w: the conversation is %d tokens and the context holds %d; /reset to start over", engine.ErrContextFull, len(ids), size)
		}
		// a whole turn: the user message and the replies after it
		n := 1
		for first+n < len(c.msgs)-1 && c.msgs[first+n].Role != "user" {
			n++
		}
		c.msgs = slices.Delete(c.msgs, first, first+n)
		dropped += n
	}
}

// renderInPlace replaces the raw text just streamed with its rendered
// markdown, so that each reply is shown once. Plain output (a pipe,
// --plain) and replies taller than the terminal (the top has scrolled
// away and cannot be erased) keep the streamed text.
func (c *termChat) renderInPlace(text string) {
	fmt.Fprintln(c.out)
	if c.width <= 0 || strings.TrimSpace(text) == "" {
		return
	}
	rows := textRows(text, c.width)
	if rows >= c.height {
		return
	}
	r, err := glamour.NewTermRenderer(glamour.WithAutoStyle(), glamour.WithWordWrap(min(c.width, 120)))
	if err != nil {
		return
	}
	md, err := r.Render(text)
	if err != nil {
		return
	}
	// the cursor is on the row below the reply: up to its first row, then
	// erase to the end of the screen
	fmt.Fprintf(c.out, "\x1b[%dA\r\x1b[J%s", rows, strings.Trim(md, "\n")+"\n")
}

// textRows is how many terminal rows text takes at width cells, each line
// wrapping at the edge.
func textRows(text string, width int) int {
	rows := 0
	for _, line := range strings.Split(text, "\n") {
		w := runewidth.StringWidth(strings.ReplaceAll(line, "\t", "        "))
		rows += max(1, (w+width-1)/width)
	}
	return rows
}
