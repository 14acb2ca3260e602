package chat

import (
	"fmt"
	"io"
	"time"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// Error is a template error. Kind is the name of the Python exception that
// jinja2 raises in the same situation (TemplateError for raise_exception,
// UndefinedError, TypeError, TemplateSyntaxError, ...), so that the text
// matches Python's "Kind: message".
type Error struct {
	Kind string
	Msg  string
}

func (e *Error) Error() string { return e.Kind + ": " + e.Msg }

func typeError(format string, args ...any) *Error {
	return &Error{Kind: "TypeError", Msg: fmt.Sprintf(format, args...)}
}

func valueError(format string, args ...any) *Error {
	return &Error{Kind: "ValueError", Msg: fmt.Sprintf(format, args...)}
}

// Limits that keep a hostile template (one comes with every downloaded model)
// from hanging or exhausting memory. Real chat templates stay far below them.
const (
	maxSourceBytes = 1 << 20  // template text
	maxNesting     = 100      // nested brackets or block tags in the source
	maxSteps       = 1000000  // operations, loop iterations, KiB of strings and 64s of list items per render
	maxCallDepth   = 200      // nested macro / loop() calls (Python's limit is ~1000 frames)
	maxDepth       = 200      // nesting of values printed or serialised
	maxStringBytes = 16 << 20 // one string value
	maxItems       = 1 << 20  // one list value
	maxOutputBytes = 64 << 20 // rendered text
	maxRange       = 100000   // jinja2.sandbox.MAX_RANGE
)

// stateKey names the per-render state in the gonja context. It cannot be
// written as a template identifier, so templates cannot reach it.
const stateKey = "\x00flowchat-state"

// state is what one Render call carries through gonja into the filters.
type state struct {
	now   func() time.Time
	steps int    // operations left before the render is stopped
	depth int    // current macro / loop() call nesting
	err   *Error // first error raised; jinja aborts at the first one
	// branches are the template's conditional arms (conditional.go).
	branches []branch
}

func stateOf(e *exec.Evaluator) *state {
	if v, ok := e.Environment.Context.Get(stateKey); ok {
		if st, ok := v.(*state); ok {
			return st
		}
	}
	// Only reachable if gonja evaluates outside Render; keep it bounded.
	return &state{now: time.Now, steps: maxSteps}
}

// fail records err as the render's error and returns it as a gonja value,
// which gonja propagates up to Execute.
func (st *state) fail(err *Error) *exec.Value {
	if st.err == nil {
		st.err = err
	}
	return exec.AsValue(err)
}

// step charges n operations against the render's budget.
func (st *state) step(n int) *Error {
	st.steps -= n
	if st.steps < 0 {
		return &Error{Kind: "RuntimeError", Msg: "template exceeded its evaluation budget"}
	}
	return nil
}

// charge bills a result by its size, so that work on big strings and lists
// counts against the budget like many small operations would.
func (st *state) charge(x any) error {
	n := 0
	switch t := x.(type) {
	case string:
		n = len(t) / 1024
	case markup:
		n = len(t) / 1024
	case []any:
		n = len(t) / 64
	case pyTuple:
		n = len(t) / 64
	case *generator:
		n = len(t.items) / 64
	}
	if n == 0 {
		return nil
	}
	if err := st.step(n); err != nil {
		return err
	}
	return nil
}

// limitWriter fails writes past maxOutputBytes.
type limitWriter struct {
	w   io.Writer
	n   int
	err *Error
}

func (l *limitWriter) Write(p []byte) (int, error) {
	l.n += len(p)
	if l.n > maxOutputBytes {
		l.err = &Error{Kind: "MemoryError", Msg: "rendered text exceeds the output limit"}
		return 0, l.err
	}
	return l.w.Write(p)
}

var (
	errTooLong = &Error{Kind: "MemoryError", Msg: "string exceeds the size limit"}
	errTooMany = &Error{Kind: "MemoryError", Msg: "list exceeds the size limit"}
)

func checkLen(s string) *Error {
	if len(s) > maxStringBytes {
		return errTooLong
	}
	return nil
}
