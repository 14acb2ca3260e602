package chat

import (
	"fmt"
	"math"
	"strings"

	gcs "github.com/nikolalohinski/gonja/v2/builtins/control_structures"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// The expression semantics of jinja2 on the Python object model. The
// rewriter (rewrite.go) turns operators, attribute and item access, calls,
// for-loop iterables and printed values into calls of these internal filters,
// so gonja parses and runs the control flow while Python's rules decide what
// an expression means.

// cx is what a filter implementation sees of the render.
type cx struct {
	e  *exec.Evaluator
	st *state
}

// pyFilter is a filter over normalised values: in | name(args..., kw...).
type pyFilter func(c cx, in any, args []any, kw map[string]any) (any, error)

// wrapFilter adapts a pyFilter to gonja: it stops at errors coming in,
// charges one step, and records errors going out as the render's error.
func wrapFilter(f pyFilter) exec.FilterFunction {
	return func(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
		if in.IsError() {
			return in
		}
		st := stateOf(e)
		if err := st.step(1); err != nil {
			return st.fail(err)
		}
		args, kw := normArgs(va)
		x := norm(in)
		if err := st.charge(x); err != nil {
			return st.fail(err.(*Error))
		}
		out, err := f(cx{e: e, st: st}, x, args, kw)
		if err == nil {
			err = st.charge(out)
		}
		if err != nil {
			return st.fail(asError(err))
		}
		return pyValue(out)
	}
}

func normArgs(va *exec.VarArgs) ([]any, map[string]any) {
	args := make([]any, len(va.Args))
	for i, a := range va.Args {
		args[i] = norm(a)
	}
	kw := make(map[string]any, len(va.KwArgs))
	for k, a := range va.KwArgs {
		kw[k] = norm(a)
	}
	return args, kw
}

// asError turns any error into an *Error; foreign ones become runtime errors.
func asError(err error) *Error {
	if e, ok := err.(*Error); ok {
		return e
	}
	return &Error{Kind: "TemplateRuntimeError", Msg: err.Error()}
}

// internalFilters are the targets of the rewriter; their names cannot be
// written in a template (they start with a character the lexer rejects).
func internalFilters() map[string]pyFilter {
	return map[string]pyFilter{
		fBinop:   filterBinop,
		fNeg:     filterNeg,
		fPos:     filterPos,
		fGetattr: filterGetattr,
		fGetitem: filterGetitem,
		fSlice:   filterSlice,
		fIter:    filterIter,
		fStr:     func(c cx, in any, _ []any, _ map[string]any) (any, error) { return pyStr(in), nil },
		fUndef: func(c cx, _ any, args []any, _ map[string]any) (any, error) {
			return newUndefined("UndefinedError", pyStr(args[0])), nil
		},
		fBool:   func(c cx, in any, _ []any, _ map[string]any) (any, error) { return truth(in), nil },
		fCond:   func(c cx, in any, _ []any, _ map[string]any) (any, error) { return boxCond(in), nil },
		fTuple:  func(c cx, in any, _ []any, _ map[string]any) (any, error) { return pyTuple(in.([]any)), nil },
		fIfElse: filterIfElse,
		fDict: func(c cx, in any, _ []any, _ map[string]any) (any, error) {
			d := exec.NewDict()
			for _, p := range in.(*exec.Dict).Pairs {
				dictSet(d, norm(p.Key), norm(p.Value))
			}
			return d, nil
		},
	}
}

// condBox carries the left operand of and/or through gonja, whose truth test
// calls every dict true and every macro false. It holds one item when the
// value is truthy and none (the value kept past its length) when falsy; norm
// unwraps it.
type condBox []any

func boxCond(x any) any {
	switch x.(type) {
	case *exec.Dict, exec.Macro, func(*exec.VarArgs) *exec.Value:
		if truth(x) {
			return condBox{x}
		}
		return condBox([]any{x}[:0])
	}
	return x
}

const (
	fBinop   = "@binop"
	fNeg     = "@neg"
	fPos     = "@pos"
	fGetattr = "@getattr"
	fGetitem = "@getitem"
	fSlice   = "@slice"
	fCall    = "@call"
	fIter    = "@iter"
	fStr     = "@str"
	fUndef   = "@undef"
	fBool    = "@bool"
	fCond    = "@cond"
	fTuple   = "@tuple"
	fDict    = "@dict"
	fIfElse  = "@ifelse"
)

func filterBinop(c cx, left any, args []any, _ map[string]any) (any, error) {
	return binop(args[0].(string), left, args[1])
}

// binop is a Python binary operator; an Undefined operand raises, except in
// ~ (which stringifies) and == / != (which compare by type).
func binop(op string, a, b any) (any, error) {
	switch op {
	case "~":
		s := pyStr(a) + pyStr(b)
		if err := checkLen(s); err != nil {
			return nil, err
		}
		return s, nil
	case "==":
		return pyEq(a, b), nil
	case "!=":
		return !pyEq(a, b), nil
	}
	if u, ok := a.(undefined); ok {
		return nil, u.err()
	}
	if u, ok := b.(undefined); ok {
		return nil, u.err()
	}
	switch op {
	case "<", "<=", ">", ">=":
		return compareOp(op, a, b)
	case "+":
		return add(a, b)
	case "*":
		return mul(a, b)
	case "%":
		if s, ok := asString(a); ok {
			return percentFormat(s, a, b)
		}
	}
	return arith(op, a, b)
}

func compareOp(op string, a, b any) (any, error) {
	c, err := pyCompare(op, a, b)
	if err != nil {
		return nil, err
	}
	switch op {
	case "<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case ">":
		return c > 0, nil
	}
	return c >= 0, nil
}

func add(a, b any) (any, error) {
	if as, ok := asString(a); ok {
		bs, ok := asString(b)
		if !ok {
			return nil, typeError(`can only concatenate str (not "%s") to str`, pyTypeName(b))
		}
		return concatStr(a, b, as, bs)
	}
	if al, ok := seqOf(a); ok {
		bl, ok := seqOf(b)
		if !ok || pyTypeName(a) != pyTypeName(b) {
			return nil, typeError(`can only concatenate %s (not "%s") to %s`, pyTypeName(a), pyTypeName(b), pyTypeName(a))
		}
		if len(al)+len(bl) > maxItems {
			return nil, errTooMany
		}
		out := append(append(make([]any, 0, len(al)+len(bl)), al...), bl...)
		if _, ok := a.(pyTuple); ok {
			return pyTuple(out), nil
		}
		return out, nil
	}
	if _, ok := asString(b); ok {
		if _, _, _, num := asNumber(a); !num || a == nil {
			return nil, typeError("unsupported operand type(s) for +: '%s' and '%s'", pyTypeName(a), pyTypeName(b))
		}
	}
	return arith("+", a, b)
}

// concatStr joins two strings; Markup escapes a plain str joined to it.
func concatStr(a, b any, as, bs string) (any, error) {
	_, am := a.(markup)
	_, bm := b.(markup)
	if am && !bm {
		bs = htmlEscape(bs)
	}
	if bm && !am {
		as = htmlEscape(as)
	}
	s := as + bs
	if err := checkLen(s); err != nil {
		return nil, err
	}
	if am || bm {
		return markup(s), nil
	}
	return s, nil
}

func mul(a, b any) (any, error) {
	if n, ok := repeatCount(b); ok {
		if r, ok, err := repeat(a, n); ok {
			return r, err
		}
	}
	if n, ok := repeatCount(a); ok {
		if r, ok, err := repeat(b, n); ok {
			return r, err
		}
	}
	_, sa := asString(a)
	_, la := seqOf(a)
	if _, isF := b.(float64); isF && (sa || la) {
		return nil, typeError("can't multiply sequence by non-int of type 'float'")
	}
	return arith("*", a, b)
}

func repeatCount(x any) (int, bool) {
	switch t := x.(type) {
	case int:
		return t, true
	case bool:
		if t {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// repeat is seq * n for strings, lists and tuples.
func repeat(x any, n int) (any, bool, error) {
	n = max(n, 0)
	if s, ok := asString(x); ok {
		if n > 0 && len(s) > maxStringBytes/n {
			return nil, true, errTooLong
		}
		r := strings.Repeat(s, n)
		if _, m := x.(markup); m {
			return markup(r), true, nil
		}
		return r, true, nil
	}
	l, ok := seqOf(x)
	if !ok {
		return nil, false, nil
	}
	if n > 0 && len(l) > maxItems/n {
		return nil, true, errTooMany
	}
	out := make([]any, 0, len(l)*n)
	for range n {
		out = append(out, l...)
	}
	if _, t := x.(pyTuple); t {
		return pyTuple(out), true, nil
	}
	return out, true, nil
}

// arith is numeric + - * / // % ** on bools, ints and floats.
func arith(op string, a, b any) (any, error) {
	ai, af, aF, aok := asNumber(a)
	bi, bf, bF, bok := asNumber(b)
	if !aok || !bok {
		return nil, typeError("unsupported operand type(s) for %s: '%s' and '%s'", op, pyTypeName(a), pyTypeName(b))
	}
	if aF || bF || op == "/" {
		return floatArith(op, af, bf)
	}
	return intArith(op, ai, bi)
}

func floatArith(op string, a, b float64) (any, error) {
	switch op {
	case "+":
		return a + b, nil
	case "-":
		return a - b, nil
	case "*":
		return a * b, nil
	case "**":
		return math.Pow(a, b), nil
	}
	if b == 0 {
		msg := map[string]string{"/": "division by zero", "//": "float floor division by zero", "%": "float modulo"}[op]
		return nil, &Error{Kind: "ZeroDivisionError", Msg: msg}
	}
	switch op {
	case "/":
		return a / b, nil
	case "//":
		return math.Floor(a / b), nil
	}
	m := math.Mod(a, b)
	if m != 0 && (m < 0) != (b < 0) {
		m += b
	}
	return m, nil
}

func intArith(op string, a, b int) (any, error) {
	switch op {
	case "+", "-", "*":
		return checkedInt(op, a, b)
	case "**":
		if b < 0 {
			return math.Pow(float64(a), float64(b)), nil
		}
		return intPow(a, b)
	}
	if b == 0 {
		msg := map[string]string{"//": "integer division or modulo by zero", "%": "integer modulo by zero"}[op]
		return nil, &Error{Kind: "ZeroDivisionError", Msg: msg}
	}
	q, m := a/b, a%b
	if m != 0 && (m < 0) != (b < 0) {
		q, m = q-1, m+b
	}
	if op == "//" {
		return q, nil
	}
	return m, nil
}

// checkedInt does int64 arithmetic; Python ints are unbounded, ours overflow
// into an error rather than wrap.
func checkedInt(op string, a, b int) (any, error) {
	var r int
	var bad bool
	switch op {
	case "+":
		r = a + b
		bad = (a > 0 && b > 0 && r < 0) || (a < 0 && b < 0 && r >= 0)
	case "-":
		r = a - b
		bad = (a >= 0 && b < 0 && r < 0) || (a < 0 && b > 0 && r >= 0)
	default:
		r = a * b
		bad = a != 0 && (r/a != b || (a == -1 && b == math.MinInt))
	}
	if bad {
		return nil, &Error{Kind: "OverflowError", Msg: "integer result too large"}
	}
	return r, nil
}

func intPow(a, b int) (any, error) {
	r := 1
	for range b {
		v, err := checkedInt("*", r, a)
		if err != nil {
			return nil, err
		}
		r = v.(int)
		if r == 0 || r == 1 {
			break
		}
	}
	if a == -1 && b%2 == 1 {
		r = -1
	}
	return r, nil
}

func filterNeg(_ cx, in any, _ []any, _ map[string]any) (any, error) {
	if u, ok := in.(undefined); ok {
		return nil, u.err()
	}
	i, f, isF, ok := asNumber(in)
	switch {
	case !ok:
		return nil, typeError("bad operand type for unary -: '%s'", pyTypeName(in))
	case isF:
		return -f, nil
	}
	return checkedInt("-", 0, i)
}

func filterPos(_ cx, in any, _ []any, _ map[string]any) (any, error) {
	if u, ok := in.(undefined); ok {
		return nil, u.err()
	}
	i, f, isF, ok := asNumber(in)
	switch {
	case !ok:
		return nil, typeError("bad operand type for unary +: '%s'", pyTypeName(in))
	case isF:
		return f, nil
	}
	return i, nil
}

func filterGetattr(c cx, obj any, args []any, _ map[string]any) (any, error) {
	return getattr(c, obj, args[0].(string))
}

// getattr is jinja2's sandboxed environment.getattr: attribute first, then item.
func getattr(c cx, obj any, name string) (any, error) {
	if u, ok := obj.(undefined); ok {
		return nil, u.err()
	}
	if v, ok := attribute(obj, name); ok {
		return v, nil
	}
	if v, ok := subscript(obj, name); ok {
		return v, nil
	}
	return undefinedAttr(obj, name), nil
}

func filterGetitem(c cx, obj any, args []any, _ map[string]any) (any, error) {
	return getitem(obj, args[0])
}

// getitem is jinja2's environment.getitem: item first, then attribute.
func getitem(obj, key any) (any, error) {
	if u, ok := obj.(undefined); ok {
		return nil, u.err()
	}
	if v, ok := subscript(obj, key); ok {
		return v, nil
	}
	if name, ok := key.(string); ok {
		if v, ok := attribute(obj, name); ok {
			return v, nil
		}
	}
	return undefinedAttr(obj, key), nil
}

// subscript is obj[key] where it succeeds in Python.
func subscript(obj, key any) (any, bool) {
	switch t := obj.(type) {
	case *exec.Dict:
		return dictGet(t, key)
	case []any:
		return indexSeq(t, key)
	case pyTuple:
		return indexSeq(t, key)
	case string, markup:
		s, _ := asString(t)
		v, ok := indexSeq(runesOf(s), key)
		if _, m := t.(markup); m && ok {
			return markup(v.(string)), true
		}
		return v, ok
	}
	return nil, false
}

func indexSeq(items []any, key any) (any, bool) {
	i, ok := repeatCount(key)
	if !ok {
		return nil, false
	}
	if i < 0 {
		i += len(items)
	}
	if i < 0 || i >= len(items) {
		return nil, false
	}
	return items[i], true
}

func runesOf(s string) []any {
	out := make([]any, 0, len(s))
	for _, r := range s {
		out = append(out, string(r))
	}
	return out
}

// attribute is Python's getattr(obj, name) for the attributes templates use,
// with the immutable sandbox's refusals as an Undefined that raises
// SecurityError when used.
func attribute(obj any, name string) (any, bool) {
	if strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__") {
		return unsafeAttr(obj, name), true
	}
	switch t := obj.(type) {
	case *namespace:
		return dictGet(t.attrs, name)
	case *gcs.LoopInfos:
		return loopAttr(t, name)
	case *cycler:
		return t.attribute(name)
	}
	if unsafeMethods[pyTypeName(obj)][name] {
		return unsafeAttr(obj, name), true
	}
	if m := boundMethod(obj, name); m != nil {
		return m, true
	}
	return nil, false
}

func unsafeAttr(obj any, name string) undefined {
	return newUndefined("SecurityError",
		fmt.Sprintf("access to attribute %s of %s object is unsafe.", pyStrRepr(name), pyStrRepr(pyTypeName(obj))))
}

// unsafeMethods are the mutating methods ImmutableSandboxedEnvironment refuses.
var unsafeMethods = map[string]map[string]bool{
	"list": {"append": true, "clear": true, "extend": true, "insert": true, "pop": true,
		"remove": true, "reverse": true, "sort": true, "__iadd__": true},
	"dict": {"clear": true, "pop": true, "popitem": true, "setdefault": true, "update": true},
}

func loopAttr(l *gcs.LoopInfos, name string) (any, bool) {
	switch name {
	case "depth": // gonja counts enclosing loops; jinja2 only recursive calls,
		return 1, true // and gonja's recursive loops expose no loop object
	case "depth0":
		return 0, true
	}
	v, ok := l.GetAttribute(name)
	if !ok {
		return nil, false
	}
	first := norm(mustAttr(l, "first")) == true
	last := norm(mustAttr(l, "last")) == true
	switch {
	case name == "previtem" && first:
		return newUndefined("UndefinedError", "there is no previous item"), true
	case name == "nextitem" && last:
		return newUndefined("UndefinedError", "there is no next item"), true
	}
	if fn, ok := v.Interface().(func(*exec.VarArgs) *exec.Value); ok {
		return &pyFunc{name: "loop." + name, call: func(st *state, va *exec.VarArgs) (any, error) {
			return valueResult(fn(va))
		}}, true
	}
	return norm(v), true
}

func mustAttr(l *gcs.LoopInfos, name string) *exec.Value {
	v, _ := l.GetAttribute(name)
	return v
}

// valueResult unwraps what a gonja callable returned.
func valueResult(v *exec.Value) (any, error) {
	if v.IsError() {
		if e, ok := v.Interface().(*Error); ok {
			return nil, e
		}
		return nil, &Error{Kind: "TemplateRuntimeError", Msg: v.Error()}
	}
	return norm(v), nil
}

func filterSlice(_ cx, obj any, args []any, _ map[string]any) (any, error) {
	if u, ok := obj.(undefined); ok {
		return nil, u.err()
	}
	var bounds [3]*int
	for i, a := range args {
		if a == nil {
			continue
		}
		n, ok := repeatCount(a)
		if !ok {
			return nil, typeError("slice indices must be integers or None or have an __index__ method")
		}
		bounds[i] = &n
	}
	if bounds[2] != nil && *bounds[2] == 0 {
		return nil, valueError("slice step cannot be zero")
	}
	return sliceValue(obj, bounds)
}

func sliceValue(obj any, b [3]*int) (any, error) {
	switch t := obj.(type) {
	case []any:
		return sliceItems(t, b), nil
	case pyTuple:
		return pyTuple(sliceItems(t, b)), nil
	case string, markup:
		s, _ := asString(t)
		var sb strings.Builder
		for _, r := range sliceItems(runesOf(s), b) {
			sb.WriteString(r.(string))
		}
		if _, m := t.(markup); m {
			return markup(sb.String()), nil
		}
		return sb.String(), nil
	}
	return newUndefined("UndefinedError", fmt.Sprintf("%s has no element slice", pyStrRepr(objectTypeRepr(obj)))), nil
}

// sliceItems is items[start:stop:step] with CPython's index adjustment.
func sliceItems(items []any, b [3]*int) []any {
	n, step := len(items), 1
	if b[2] != nil {
		step = *b[2]
	}
	start, stop := 0, n
	if step < 0 {
		start, stop = n-1, -1
	}
	if b[0] != nil {
		start = adjustIndex(*b[0], n, step)
	}
	if b[1] != nil {
		stop = adjustIndex(*b[1], n, step)
	}
	var out []any
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		out = append(out, items[i])
	}
	if out == nil {
		out = []any{}
	}
	return out
}

func adjustIndex(i, n, step int) int {
	if i < 0 {
		i += n
		if i < 0 {
			if step < 0 {
				return -1
			}
			return 0
		}
	} else if i >= n {
		if step < 0 {
			return n - 1
		}
		return n
	}
	return i
}

// callFilter is @call: it needs the un-normalised VarArgs to hand to macros.
func callFilter(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	st := stateOf(e)
	if err := st.step(1); err != nil {
		return st.fail(err)
	}
	out, err := callValue(st, norm(in), va)
	if err != nil {
		return st.fail(asError(err))
	}
	return pyValue(out)
}

// callValue calls a template-visible callable, bounding recursion.
func callValue(st *state, fn any, va *exec.VarArgs) (any, error) {
	switch f := fn.(type) {
	case undefined:
		return nil, f.err()
	case *pyFunc:
		return f.call(st, va)
	case exec.Macro:
		return nested(st, func() (any, error) { return valueResult(f(va)) })
	case func(*exec.VarArgs) *exec.Value:
		return nested(st, func() (any, error) { return valueResult(f(va)) })
	}
	return nil, typeError("'%s' object is not callable", pyTypeName(fn))
}

func nested(st *state, f func() (any, error)) (any, error) {
	if st.depth >= maxCallDepth {
		return nil, &Error{Kind: "RecursionError", Msg: "maximum recursion depth exceeded"}
	}
	st.depth++
	defer func() { st.depth-- }()
	return f()
}

func filterIter(c cx, in any, _ []any, _ map[string]any) (any, error) {
	items, err := iterate(in)
	if err != nil {
		return nil, err
	}
	if err := c.st.step(len(items)); err != nil {
		return nil, err
	}
	return items, nil
}

// iterate is Python's list(iter(x)).
func iterate(x any) ([]any, error) {
	switch t := x.(type) {
	case []any:
		return normItems(t), nil
	case pyTuple:
		return normItems(t), nil
	case *exec.Dict:
		return dictKeys(t), nil
	case string, markup:
		s, _ := asString(t)
		if len(s) > maxItems {
			return nil, errTooMany
		}
		return runesOf(s), nil
	case undefined:
		return []any{}, nil
	case *generator:
		return t.drain(), nil
	}
	return nil, typeError("'%s' object is not iterable", pyTypeName(x))
}

// normItems normalises list elements (gonja may store *exec.Value in lists).
func normItems(items []any) []any {
	out := make([]any, len(items))
	for i, x := range items {
		out[i] = normAny(x)
	}
	return out
}

// filterIfElse evaluates the arm of conditional args[0] that in selects.
func filterIfElse(c cx, in any, args []any, _ map[string]any) (any, error) {
	b := c.st.branches[args[0].(int)]
	arm := b.then
	if !truth(in) {
		arm = b.other
	}
	if arm == nil {
		return newUndefined("UndefinedError", "the inline if-expression evaluated to false and no else section was defined."), nil
	}
	return valueResult(c.e.Eval(arm))
}
