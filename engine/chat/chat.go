package chat

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// Message is one turn of a conversation. Templates see it as the dict
// {"role": ..., "content": ...}; fields added later (tool calls) must be
// added to messageDict in the order Hugging Face's messages carry them.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Options are the template variables besides messages.
type Options struct {
	AddGenerationPrompt bool
	BOS, EOS            string           // bos_token and eos_token
	Now                 func() time.Time // for strftime_now; nil means time.Now
	// Extra holds further variables: "tools", "documents", template switches
	// such as "enable_thinking". Values are Go data (maps, slices, structs,
	// numbers, strings) or json.RawMessage, whose object keys keep their
	// order. Variables not given are undefined, as jinja2 has them. An Extra
	// entry replaces the variable of the same name set from the arguments,
	// e.g. "messages" as JSON to pass tool calls that Message cannot hold.
	Extra map[string]any
}

// Template is a parsed chat template, safe for concurrent Render calls.
type Template struct {
	tpl      *exec.Template
	names    []string // variables the template reads
	branches []branch // arms of conditionals inside brackets
}

// Parse compiles a chat template. Errors are *Error with Kind
// TemplateSyntaxError (malformed template) or TemplateAssertionError
// (unknown filter or test), as jinja2 reports them at compile time.
func Parse(src string) (t *Template, err error) {
	defer recoverInto(&err, "TemplateSyntaxError")
	if len(src) > maxSourceBytes {
		return nil, &Error{Kind: "TemplateSyntaxError", Msg: "template is larger than 1 MiB"}
	}
	src = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(src) // as both lexers do
	src, lits, err := protectStrings(src)
	if err != nil {
		return nil, err
	}
	src = fixLeftStrip(src)
	cfg := newConfig()
	if err := checkNesting(src, cfg); err != nil {
		return nil, err
	}
	tpl, err := exec.NewTemplate(rootName, cfg, sourceLoader{src}, environment())
	if err != nil {
		return nil, &Error{Kind: "TemplateSyntaxError", Msg: parseMessage(err)}
	}
	rw := &rewriter{env: environment(), names: map[string]bool{}, lits: lits}
	rw.nodes(tpl.Root().Nodes)
	if rw.err != nil {
		if e, ok := rw.err.(*Error); ok {
			return nil, e
		}
		return nil, &Error{Kind: "TemplateSyntaxError", Msg: rw.err.Error()}
	}
	names := make([]string, 0, len(rw.names))
	for n := range rw.names {
		names = append(names, n)
	}
	sort.Strings(names)
	return &Template{tpl: tpl, names: names, branches: rw.branches}, nil
}

// parseMessage drops gonja's prefix, which quotes the whole template.
func parseMessage(err error) string {
	if inner := errors.Unwrap(err); inner != nil {
		err = inner
	}
	return err.Error()
}

// Render renders the template for msgs. A template error comes back as an
// *Error whose text is jinja2's "Kind: message", e.g.
// "TemplateError: System role not supported" from raise_exception or
// "UndefinedError: 'functions' is undefined".
func (t *Template) Render(msgs []Message, opts Options) (out string, err error) {
	defer recoverInto(&err, "InternalError")
	st := &state{now: opts.Now, steps: maxSteps, branches: t.branches}
	if st.now == nil {
		st.now = time.Now
	}
	vars, err := t.variables(msgs, opts)
	if err != nil {
		return "", err
	}
	vars[stateKey] = st
	var buf strings.Builder
	w := &limitWriter{w: &buf}
	execErr := t.tpl.Execute(w, exec.NewContext(vars))
	switch {
	case st.err != nil:
		return "", st.err
	case w.err != nil:
		return "", w.err
	case execErr != nil:
		return "", &Error{Kind: "TemplateRuntimeError", Msg: execErr.Error()}
	}
	return buf.String(), nil
}

// variables binds messages, the options, and Undefined for every other name
// the template reads (gonja alone would give None).
func (t *Template) variables(msgs []Message, opts Options) (map[string]any, error) {
	vars := map[string]any{
		"messages":              messagesValue(msgs),
		"add_generation_prompt": opts.AddGenerationPrompt,
		"bos_token":             opts.BOS,
		"eos_token":             opts.EOS,
	}
	for k, v := range opts.Extra {
		pv, err := fromGo(v)
		if err != nil {
			return nil, fmt.Errorf("chat: variable %q: %w", k, err)
		}
		vars[k] = pv
	}
	globals := environment().Context
	for _, name := range t.names {
		if _, ok := vars[name]; !ok && !globals.Has(name) {
			vars[name] = undefinedName(name)
		}
	}
	return vars, nil
}

func messagesValue(msgs []Message) []any {
	out := make([]any, len(msgs))
	for i, m := range msgs {
		out[i] = messageDict(m)
	}
	return out
}

func messageDict(m Message) *exec.Dict {
	d := exec.NewDict()
	dictSet(d, "role", m.Role)
	dictSet(d, "content", m.Content)
	return d
}

// recoverInto turns a panic into an error of the given kind: a template is
// outside input and must not crash the process. gonja's parser dereferences
// nil on some malformed templates (e.g. "{%if [0 is %}"), so at Parse a
// panic means a syntax error; at Render it would be a bug (InternalError).
func recoverInto(err *error, kind string) {
	if r := recover(); r != nil {
		*err = &Error{Kind: kind, Msg: fmt.Sprintf("malformed template (%v)", r)}
	}
}

// fallbackSource is ChatML, what llama.cpp applies when a model has no
// template (its "chatml" built-in) and what transformers used as its
// default_chat_template: <|im_start|>role\ncontent<|im_end|>\n per message,
// and <|im_start|>assistant\n as the generation prompt.
const fallbackSource = "{% for message in messages %}" +
	"{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}" +
	"{% endfor %}" +
	"{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

var (
	fallbackOnce sync.Once
	fallbackTpl  *Template
)

// Fallback returns the ChatML template for models that ship none.
func Fallback() *Template {
	fallbackOnce.Do(func() {
		t, err := Parse(fallbackSource)
		if err != nil {
			panic("chat: fallback template: " + err.Error())
		}
		fallbackTpl = t
	})
	return fallbackTpl
}
