package pickle

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// render prints a value the way testdata/gen's Python renderer does.
func render(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		return map[bool]string{true: "True", false: "False"}[x]
	case int64:
		return strconv.FormatInt(x, 10)
	case *big.Int:
		return x.String()
	case float64:
		return pyFloat(x)
	case string:
		return "s:" + hex.EncodeToString([]byte(x))
	case []byte:
		return "b:" + hex.EncodeToString(x)
	case Tuple:
		return "(" + join(x) + ")"
	case *List:
		return "[" + join(x.Items) + "]"
	case *Dict:
		parts := make([]string, len(x.Keys))
		for i := range x.Keys {
			parts[i] = render(x.Keys[i]) + ":" + render(x.Values[i])
		}
		return "{" + strings.Join(parts, ",") + "}"
	case *Set:
		items := append([]any(nil), x.Items...)
		sort.Slice(items, func(i, j int) bool { a, _ := Int(items[i]); b, _ := Int(items[j]); return a < b })
		return "set(" + join(items) + ")"
	}
	return fmt.Sprintf("<%T>", v)
}

func join(xs []any) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = render(x)
	}
	return strings.Join(parts, ",")
}

// pyFloat formats like Python's repr for the values in the cases.
func pyFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// testResolver allows only the set constructors the Python cases use.
func testResolver(module, name string) (*Callable, error) {
	if module == "builtins" && (name == "set" || name == "frozenset") {
		return &Callable{Name: name, Call: func(a Tuple) (any, error) {
			if len(a) == 0 {
				return &Set{}, nil
			}
			l, ok := a[0].(*List)
			if !ok {
				return nil, ErrFormat
			}
			return &Set{Items: l.Items}, nil
		}}, nil
	}
	return nil, fmt.Errorf("%w %s.%s", ErrForbidden, module, name)
}

// TestPythonCases decodes pickles that CPython wrote at protocols 0-5
// (testdata/python_cases.txt: protocol, hex pickle, rendering).
func TestPythonCases(t *testing.T) {
	f, err := os.Open("testdata/python_cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), " ", 3)
		data, _ := hex.DecodeString(parts[1])
		obj, used, err := Load(data, testResolver, nil)
		if err != nil {
			t.Errorf("protocol %s: %v", parts[0], err)
			continue
		}
		if used != len(data) {
			t.Errorf("protocol %s: used %d of %d bytes", parts[0], used, len(data))
		}
		if got := render(obj); got != parts[2] {
			t.Errorf("protocol %s:\n got %s\nwant %s", parts[0], got, parts[2])
		}
		n++
	}
	if n != 9 {
		t.Errorf("%d cases", n)
	}
}

// TestSharedReference: a memoized list is the same object under both keys.
func TestSharedReference(t *testing.T) {
	// [1] memoized, fetched again, both in one tuple: ([1], [1]) with one list.
	obj, _, err := Load([]byte("\x80\x04]\x94K\x01ah\x00\x86."), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tu := obj.(Tuple)
	if tu[0].(*List) != tu[1].(*List) || render(tu) != "([1],[1])" {
		t.Errorf("got %s, not one shared list", render(tu))
	}
}

func TestMalformed(t *testing.T) {
	for name, prog := range map[string]string{
		"empty":          "",
		"no stop":        "\x80\x02K\x01",
		"underflow":      "\x80\x02R.",
		"two left":       "K\x01K\x02.",
		"huge unicode":   "\x8d\xff\xff\xff\xff\xff\xff\xff\x7fabc.",
		"bad memo":       "h\x05.",
		"setitem on int": "K\x01K\x02K\x03s.",
		"append on dict": "}K\x01a.",
		"call of int":    "K\x01)R.",
		"ext opcode":     "\x82\x01.",
		"bad global":     "cos\nsystem\n.",
		"pop past mark":  "K\x01(0.",
		"big memo index": "K\x01r\xff\xff\xff\xff.",
	} {
		_, _, err := Load([]byte(prog), nil, nil)
		if err == nil {
			t.Errorf("%s: no error", name)
		}
		if name == "bad global" && !errors.Is(err, ErrForbidden) {
			t.Errorf("bad global: %v", err)
		}
	}
}

// FuzzLoad runs arbitrary programs through the state-dict allow-list: an
// error or a value, never a panic, and nothing outside the allow-list.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("\x80\x02ccollections\nOrderedDict\n)R."))
	f.Add([]byte("\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00]\x94K\x01a."))
	f.Add([]byte("(X\x01\x00\x00\x00aJ\xff\xff\xff\xff\x8a\x02\x01\x80d."))
	f.Fuzz(func(t *testing.T, data []byte) {
		persist := func(pid any) (any, error) {
			sc, key, n, _, err := storageFromPID(pid)
			if err != nil {
				return nil, err
			}
			if n > 1<<16 {
				return nil, ErrFormat
			}
			return &storage{key: key, dtype: sc.dtype, size: sc.size, numel: n, data: make([]byte, n*int64(sc.size))}, nil
		}
		obj, _, err := Load(data, resolveTorch, persist)
		if err == nil {
			c := &Checkpoint{byName: map[string]int{}}
			_ = c.collect(obj)
		}
	})
}
