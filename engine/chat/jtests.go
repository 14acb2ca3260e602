package chat

import (
	"strings"

	gcs "github.com/nikolalohinski/gonja/v2/builtins/control_structures"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// The jinja2 3.1 builtin tests ("x is defined", "x in y"). gonja parses
// "x in y" as a test named "in", so containment lives here too.

type pyTest func(c cx, in any, args []any) (bool, error)

func wrapTest(t pyTest) exec.TestFunction {
	return func(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) (bool, error) {
		if in.IsError() {
			return false, in
		}
		st := stateOf(e)
		if err := st.step(1); err != nil {
			st.fail(err)
			return false, err
		}
		args, _ := normArgs(va)
		ok, err := t(cx{e: e, st: st}, norm(in), args)
		if err != nil {
			st.fail(asError(err))
			return false, err
		}
		return ok, nil
	}
}

func builtinTests() map[string]pyTest {
	kind := func(f func(any) bool) pyTest {
		return func(_ cx, in any, _ []any) (bool, error) { return f(in), nil }
	}
	cmp := func(op string) pyTest {
		return func(_ cx, in any, args []any) (bool, error) {
			if len(args) != 1 {
				return false, typeError("test takes exactly one argument (%d given)", len(args))
			}
			v, err := binop(op, in, args[0])
			return truth(v), err
		}
	}
	tests := map[string]pyTest{
		"defined":   kind(func(x any) bool { _, u := x.(undefined); return !u }),
		"undefined": kind(func(x any) bool { _, u := x.(undefined); return u }),
		"none":      kind(func(x any) bool { return x == nil }),
		"boolean":   kind(func(x any) bool { _, ok := x.(bool); return ok }),
		"true":      kind(func(x any) bool { return x == true }),
		"false":     kind(func(x any) bool { return x == false }),
		"integer":   kind(func(x any) bool { _, ok := x.(int); return ok }),
		"float":     kind(func(x any) bool { _, ok := x.(float64); return ok }),
		"number":    kind(func(x any) bool { _, _, _, ok := asNumber(x); return ok }),
		"string":    kind(func(x any) bool { _, ok := asString(x); return ok }),
		"mapping":   kind(func(x any) bool { _, ok := x.(*exec.Dict); return ok }),
		"iterable":  kind(isIterable),
		"sequence":  kind(isSequence),
		"callable":  kind(isCallable),
		"escaped":   kind(func(x any) bool { _, ok := x.(markup); return ok }),
		"lower":     strTest(unicodeLowerTest),
		"upper":     strTest(unicodeUpperTest),
		"odd":       parity(1),
		"even":      parity(0),
		"sameas":    testSameas,
		"in":        testIn,
		"filter": func(c cx, in any, _ []any) (bool, error) {
			name, ok := asString(in)
			return ok && name[0:min(1, len(name))] != "@" && c.e.Environment.Filters.Exists(name), nil
		},
		"test": func(c cx, in any, _ []any) (bool, error) {
			name, ok := asString(in)
			return ok && c.e.Environment.Tests.Exists(name), nil
		},
		"divisibleby": func(_ cx, in any, args []any) (bool, error) {
			if len(args) != 1 {
				return false, typeError("divisibleby() takes exactly one argument")
			}
			v, err := binop("%", in, args[0])
			return err == nil && pyEq(v, 0), err
		},
	}
	for _, names := range [][]string{{"eq", "equalto", "=="}, {"ne", "!="}, {"lt", "lessthan", "<"},
		{"le", "<="}, {"gt", "greaterthan", ">"}, {"ge", ">="}} {
		op := names[len(names)-1]
		for _, n := range names {
			tests[n] = cmp(op)
		}
	}
	return tests
}

func isIterable(x any) bool {
	switch x.(type) {
	case string, markup, []any, pyTuple, *exec.Dict, undefined, *generator:
		return true
	}
	return false
}

// isSequence mirrors jinja2's test: len() and __getitem__ both exist.
func isSequence(x any) bool {
	switch x.(type) {
	case string, markup, []any, pyTuple, *exec.Dict, undefined:
		return true
	}
	return false
}

func isCallable(x any) bool {
	switch x.(type) {
	case *pyFunc, exec.Macro, func(*exec.VarArgs) *exec.Value:
		return true
	}
	return false
}

func strTest(f func(string) bool) pyTest {
	return func(_ cx, in any, _ []any) (bool, error) { return f(pyStr(in)), nil }
}

func unicodeLowerTest(s string) bool {
	v, _ := strMethods["islower"](s, nil, nil)
	return v == true
}

func unicodeUpperTest(s string) bool {
	v, _ := strMethods["isupper"](s, nil, nil)
	return v == true
}

func parity(want int) pyTest {
	return func(_ cx, in any, _ []any) (bool, error) {
		v, err := binop("%", in, 2)
		return err == nil && pyEq(v, want), err
	}
}

func testSameas(_ cx, in any, args []any) (bool, error) {
	if len(args) != 1 {
		return false, typeError("sameas() takes exactly one argument")
	}
	switch in.(type) {
	case nil, bool:
		return in == args[0], nil
	}
	return sameObject(in, args[0]), nil
}

func testIn(_ cx, in any, args []any) (bool, error) {
	if len(args) != 1 {
		return false, typeError("in() takes exactly one argument")
	}
	return contains(args[0], in)
}

// contains is Python's "x in container".
func contains(container, x any) (bool, error) {
	if s, ok := asString(container); ok {
		sub, ok := asString(x)
		if !ok {
			return false, typeError("'in <string>' requires string as left operand, not %s", pyTypeName(x))
		}
		return strings.Contains(s, sub), nil
	}
	switch t := container.(type) {
	case *exec.Dict:
		_, ok := dictGet(t, x)
		return ok, nil
	case undefined:
		return false, nil
	case *gcs.LoopInfos, *namespace, nil, bool, int, float64:
		return false, typeError("argument of type '%s' is not iterable", pyTypeName(container))
	}
	items, err := iterate(container)
	if err != nil {
		return false, err
	}
	return containsEq(items, x), nil
}
