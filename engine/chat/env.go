package chat

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
)

// The gonja environment that stands in for Hugging Face's
// ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
// extensions=[loopcontrols]). It is built once and shared: renders keep
// their mutable state in the context (state.go), never here.

var (
	envOnce   sync.Once
	sharedEnv *exec.Environment
)

func environment() *exec.Environment {
	envOnce.Do(func() { sharedEnv = newEnvironment() })
	return sharedEnv
}

func newEnvironment() *exec.Environment {
	filters := exec.NewFilterSet(map[string]exec.FilterFunction{fCall: callFilter})
	for name, f := range builtinFilters() {
		mustRegister(filters.Register(name, wrapFilter(f)))
	}
	for name, f := range internalFilters() {
		mustRegister(filters.Register(name, wrapFilter(f)))
	}
	tests := exec.NewTestSet(map[string]exec.TestFunction{})
	for name, t := range builtinTests() {
		mustRegister(tests.Register(name, wrapTest(t)))
	}
	return &exec.Environment{
		Filters:           filters,
		Tests:             tests,
		ControlStructures: tagSet(),
		Context:           exec.NewContext(globals()),
		Methods: exec.Methods{ // unused: every call goes through @call
			Bool:  exec.NewMethodSet(map[string]exec.Method[bool]{}),
			Int:   exec.NewMethodSet(map[string]exec.Method[int]{}),
			Float: exec.NewMethodSet(map[string]exec.Method[float64]{}),
			Str:   exec.NewMethodSet(map[string]exec.Method[string]{}),
			Dict:  exec.NewMethodSet(map[string]exec.Method[map[string]any]{}),
			List:  exec.NewMethodSet(map[string]exec.Method[[]any]{}),
		},
	}
}

func mustRegister(err error) {
	if err != nil {
		panic(err)
	}
}

func newConfig() *config.Config {
	cfg := config.New()
	cfg.TrimBlocks = true
	cfg.LeftStripBlocks = true
	return cfg
}

// sourceLoader serves the one template and nothing else: chat templates
// get no file system (jinja2's from_string has no loader either).
type sourceLoader struct{ src string }

const rootName = "chat_template"

func (l sourceLoader) Read(path string) (io.Reader, error) {
	if path != rootName {
		return nil, fmt.Errorf("no loader for template %q", path)
	}
	return strings.NewReader(l.src), nil
}

func (l sourceLoader) Resolve(path string) (string, error)         { return path, nil }
func (l sourceLoader) Inherit(from string) (loaders.Loader, error) { return l, nil }

// globals are the functions every template sees.
func globals() map[string]any {
	fn := func(name string, f func(st *state, args []any, kw map[string]any) (any, error)) *pyFunc {
		return &pyFunc{name: name, call: func(st *state, va *exec.VarArgs) (any, error) {
			args, kw := normArgs(va)
			return f(st, args, kw)
		}}
	}
	return map[string]any{
		"range":           fn("range", globalRange),
		"namespace":       fn("namespace", globalNamespace),
		"dict":            fn("dict", globalDict),
		"joiner":          fn("joiner", globalJoiner),
		"cycler":          fn("cycler", globalCycler),
		"lipsum":          fn("lipsum", globalLipsum),
		"raise_exception": fn("raise_exception", globalRaise),
		"strftime_now":    fn("strftime_now", globalStrftime),
	}
}

// globalRaise is Hugging Face's raise_exception: it aborts the render with
// jinja2.exceptions.TemplateError(message).
func globalRaise(_ *state, args []any, kw map[string]any) (any, error) {
	a, err := bind("raise_exception", args, kw, p("message", required))
	if err != nil {
		return nil, err
	}
	return nil, &Error{Kind: "TemplateError", Msg: pyStr(a[0])}
}

// globalStrftime is Hugging Face's strftime_now: datetime.now().strftime(fmt).
func globalStrftime(st *state, args []any, kw map[string]any) (any, error) {
	a, err := bind("strftime_now", args, kw, p("format", required))
	if err != nil {
		return nil, err
	}
	f, err := wantStr("strftime_now", a[0])
	if err != nil {
		return nil, err
	}
	return strftime(f, st.now()), nil
}

// globalRange is range() as a list, refused past the sandbox's MAX_RANGE.
func globalRange(st *state, args []any, _ map[string]any) (any, error) {
	if len(args) == 0 || len(args) > 3 {
		return nil, typeError("range expected at most 3 arguments, got %d", len(args))
	}
	n := make([]int, len(args))
	for i, a := range args {
		v, err := wantInt("range", a)
		if err != nil {
			return nil, err
		}
		n[i] = v
	}
	start, stop, step := 0, n[0], 1
	if len(n) > 1 {
		start, stop = n[0], n[1]
	}
	if len(n) > 2 {
		step = n[2]
	}
	if step == 0 {
		return nil, valueError("range() arg 3 must not be zero")
	}
	return rangeItems(st, start, stop, step)
}

func rangeItems(st *state, start, stop, step int) (any, error) {
	count := 0
	if step > 0 && start < stop {
		count = (stop - start + step - 1) / step
	} else if step < 0 && start > stop {
		count = (start - stop - step - 1) / -step
	}
	if count > maxRange || count < 0 {
		return nil, &Error{Kind: "OverflowError", Msg: fmt.Sprintf(
			"Range too big. The sandbox blocks ranges larger than MAX_RANGE (%d).", maxRange)}
	}
	if err := st.step(count); err != nil {
		return nil, err
	}
	out := make([]any, count)
	for i := range out {
		out[i] = start + i*step
	}
	return out, nil
}

// kwDict builds a dict from keyword arguments. gonja's parser keeps them in
// a Go map, so their order is lost; they come out sorted by name.
func kwDict(args []any, kw map[string]any, fn string) (*exec.Dict, error) {
	d := exec.NewDict()
	if len(args) > 1 {
		return nil, typeError("%s expected at most 1 argument, got %d", fn, len(args))
	}
	if len(args) == 1 {
		src, ok := args[0].(*exec.Dict)
		if !ok {
			return nil, typeError("cannot convert %s to a dict", pyTypeName(args[0]))
		}
		for _, p := range src.Pairs {
			dictSet(d, norm(p.Key), norm(p.Value))
		}
	}
	keys := make([]string, 0, len(kw))
	for k := range kw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		dictSet(d, k, kw[k])
	}
	return d, nil
}

func globalDict(_ *state, args []any, kw map[string]any) (any, error) {
	return kwDict(args, kw, "dict")
}

func globalNamespace(_ *state, args []any, kw map[string]any) (any, error) {
	d, err := kwDict(args, kw, "namespace")
	if err != nil {
		return nil, err
	}
	return &namespace{attrs: d}, nil
}

// globalJoiner returns a callable that yields "" the first time, then sep.
func globalJoiner(_ *state, args []any, kw map[string]any) (any, error) {
	a, err := bind("joiner", args, kw, p("sep", ", "))
	if err != nil {
		return nil, err
	}
	used := false
	return &pyFunc{name: "joiner", call: func(*state, *exec.VarArgs) (any, error) {
		if !used {
			used = true
			return "", nil
		}
		return a[0], nil
	}}, nil
}

// cycler is jinja2.utils.Cycler: next() returns the items in turn.
type cycler struct {
	items []any
	pos   int
}

func globalCycler(_ *state, args []any, _ map[string]any) (any, error) {
	if len(args) == 0 {
		return nil, typeError("at least one item has to be provided")
	}
	return &cycler{items: args}, nil
}

func (c *cycler) attribute(name string) (any, bool) {
	switch name {
	case "current":
		return c.items[c.pos], true
	case "next":
		return &pyFunc{name: "next", call: func(*state, *exec.VarArgs) (any, error) {
			v := c.items[c.pos]
			c.pos = (c.pos + 1) % len(c.items)
			return v, nil
		}}, true
	case "reset":
		return &pyFunc{name: "reset", call: func(*state, *exec.VarArgs) (any, error) {
			c.pos = 0
			return nil, nil
		}}, true
	}
	return nil, false
}

// globalLipsum exists so that "lipsum is defined" holds; its text is random
// in jinja2, so no template can depend on it.
func globalLipsum(_ *state, _ []any, _ map[string]any) (any, error) {
	return nil, &Error{Kind: "TemplateRuntimeError", Msg: "lipsum() is not supported"}
}
