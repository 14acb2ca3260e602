package chat

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	gcs "github.com/nikolalohinski/gonja/v2/builtins/control_structures"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// The Python object model as seen by templates. Inside gonja every value is
// one of these Go types (after norm):
//
//	nil (None), bool, int, float64, string (str), markup (markupsafe.Markup),
//	[]any (list), pyTuple (tuple), *exec.Dict (dict, insertion-ordered),
//	undefined, *generator, *namespace, *pyFunc, exec.Macro, *LoopInfos.
//
// *exec.Dict is gonja's own ordered dict, so gonja's iteration keeps Python's
// insertion order (Go maps would come out sorted).

// undefined is jinja2.Undefined: falsy, empty when iterated, "" when printed,
// and raises its error when used in arithmetic, attribute access or calls.
// It is a zero-length slice so that gonja's own truth test and iteration
// (reflect Kind Slice, Len 0) see it as falsy and empty; the error it raises
// is stored past the slice's length (cap 1).
type undefined []*Error

func newUndefined(kind, msg string) undefined {
	return undefined([]*Error{{Kind: kind, Msg: msg}}[:0])
}

func (u undefined) err() *Error {
	if cap(u) == 0 {
		return &Error{Kind: "UndefinedError", Msg: "undefined value"}
	}
	return u[:1][0]
}

// String makes gonja print an undefined as "".
func (u undefined) String() string { return "" }

// undefinedName is the Undefined of a variable that was never set.
func undefinedName(name string) undefined {
	return newUndefined("UndefinedError", fmt.Sprintf("%s is undefined", pyStrRepr(name)))
}

// undefinedAttr is the Undefined of a failed obj.name or obj[key] lookup.
func undefinedAttr(obj, key any) undefined {
	if _, ok := key.(string); !ok {
		return newUndefined("UndefinedError",
			fmt.Sprintf("%s has no element %s", objectTypeRepr(obj), pyRepr(key)))
	}
	return newUndefined("UndefinedError",
		fmt.Sprintf("%s has no attribute %s", pyStrRepr(objectTypeRepr(obj)), pyRepr(key)))
}

// markup is markupsafe.Markup: a str that escapes what is added to it.
type markup string

// pyTuple is a Python tuple (printed with parentheses, unequal to lists).
type pyTuple []any

// generator is a one-shot iterator (the result of map, select, reverse...):
// truthy even when empty, not JSON-serialisable, without len().
type generator struct {
	typeName string
	items    []any
	used     bool
}

// drain returns the generator's remaining items and exhausts it.
func (g *generator) drain() []any {
	if g.used {
		return nil
	}
	g.used = true
	return g.items
}

// namespace is jinja2.utils.Namespace, the only object templates may mutate.
type namespace struct{ attrs *exec.Dict }

// pyFunc is a Python callable implemented in Go (globals, bound methods).
type pyFunc struct {
	name string
	call func(st *state, va *exec.VarArgs) (any, error)
}

// norm converts a gonja value to the Python object model above.
func norm(v *exec.Value) any {
	if v == nil || !v.Val.IsValid() || !v.Val.CanInterface() {
		return nil
	}
	return normAny(v.Val.Interface())
}

func normAny(x any) any {
	switch t := x.(type) {
	case nil, bool, int, float64, string, markup, []any, pyTuple, *exec.Dict,
		undefined, *generator, *namespace, *pyFunc, exec.Macro, *gcs.LoopInfos:
		return t
	case *exec.Value:
		return norm(t)
	case condBox:
		return normAny(t[:1][0])
	case exec.ValuesList:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = norm(e)
		}
		return out
	case []string:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = e
		}
		return out
	case [2]*exec.Value:
		return pyTuple{norm(t[0]), norm(t[1])}
	case exec.Dict:
		return &t
	case map[string]any:
		return dictFromMap(t)
	}
	return normReflect(reflect.ValueOf(x))
}

// normReflect handles the remaining Go kinds (int64, float32, named strings...).
func normReflect(rv reflect.Value) any {
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return int(rv.Uint())
	case reflect.Float32, reflect.Float64:
		return rv.Float()
	case reflect.String:
		return rv.String()
	case reflect.Bool:
		return rv.Bool()
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = normAny(rv.Index(i).Interface())
		}
		return out
	case reflect.Pointer:
		if rv.IsNil() {
			return nil
		}
	}
	return rv.Interface()
}

func dictFromMap(m map[string]any) *exec.Dict {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	d := exec.NewDict()
	for _, k := range keys {
		dictSet(d, k, normAny(m[k]))
	}
	return d
}

// pyValue wraps a Python object for gonja.
func pyValue(x any) *exec.Value {
	if x == nil {
		return exec.AsValue(nil)
	}
	return exec.AsValue(x)
}

func dictGet(d *exec.Dict, key any) (any, bool) {
	for _, p := range d.Pairs {
		if pyEq(norm(p.Key), key) {
			return norm(p.Value), true
		}
	}
	return nil, false
}

func dictSet(d *exec.Dict, key, val any) {
	for _, p := range d.Pairs {
		if pyEq(norm(p.Key), key) {
			p.Value = pyValue(val)
			return
		}
	}
	d.Pairs = append(d.Pairs, &exec.Pair{Key: pyValue(key), Value: pyValue(val)})
}

func dictKeys(d *exec.Dict) []any {
	out := make([]any, len(d.Pairs))
	for i, p := range d.Pairs {
		out[i] = norm(p.Key)
	}
	return out
}

func dictItems(d *exec.Dict) []any {
	out := make([]any, len(d.Pairs))
	for i, p := range d.Pairs {
		out[i] = pyTuple{norm(p.Key), norm(p.Value)}
	}
	return out
}

// pyTypeName is type(x).__name__.
func pyTypeName(x any) string {
	switch t := x.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case markup:
		return "Markup"
	case []any:
		return "list"
	case pyTuple:
		return "tuple"
	case *exec.Dict:
		return "dict"
	case undefined:
		return "Undefined"
	case *generator:
		return t.typeName
	case *namespace:
		return "Namespace"
	case *pyFunc:
		return "builtin_function_or_method"
	case *cycler:
		return "Cycler"
	case exec.Macro:
		return "Macro"
	case *gcs.LoopInfos:
		return "LoopContext"
	}
	return fmt.Sprintf("%T", x)
}

// objectTypeRepr is jinja2.utils.object_type_repr, used in undefined hints.
func objectTypeRepr(x any) string {
	switch x.(type) {
	case nil:
		return "None"
	case markup:
		return "markupsafe.Markup object"
	case undefined:
		return "jinja2.runtime.Undefined object"
	case *namespace:
		return "jinja2.utils.Namespace object"
	case exec.Macro:
		return "jinja2.runtime.Macro object"
	case *gcs.LoopInfos:
		return "jinja2.runtime.LoopContext object"
	}
	return pyTypeName(x) + " object"
}

// truth is Python's bool(x).
func truth(x any) bool {
	switch t := x.(type) {
	case nil:
		return false
	case bool:
		return t
	case int:
		return t != 0
	case float64:
		return t != 0
	case string:
		return t != ""
	case markup:
		return t != ""
	case []any:
		return len(t) > 0
	case pyTuple:
		return len(t) > 0
	case *exec.Dict:
		return len(t.Pairs) > 0
	case undefined:
		return false
	}
	return true
}

// asString returns the text of a str or Markup.
func asString(x any) (string, bool) {
	switch t := x.(type) {
	case string:
		return t, true
	case markup:
		return string(t), true
	}
	return "", false
}

// asNumber returns a bool, int or float as (int, float, isFloat).
func asNumber(x any) (int, float64, bool, bool) {
	switch t := x.(type) {
	case bool:
		if t {
			return 1, 1, false, true
		}
		return 0, 0, false, true
	case int:
		return t, float64(t), false, true
	case float64:
		return 0, t, true, true
	}
	return 0, 0, false, false
}

// pyStr is Python's str(x).
func pyStr(x any) string {
	switch t := x.(type) {
	case string:
		return t
	case markup:
		return string(t)
	case undefined:
		return ""
	case nil:
		return "None"
	case bool:
		if t {
			return "True"
		}
		return "False"
	case int:
		return strconv.Itoa(t)
	case float64:
		return floatRepr(t)
	}
	return pyRepr(x)
}

// pyRepr is Python's repr(x).
func pyRepr(x any) string {
	var b strings.Builder
	writeRepr(&b, x, 0)
	return b.String()
}

func writeRepr(b *strings.Builder, x any, depth int) {
	if depth > maxDepth {
		b.WriteString("...")
		return
	}
	switch t := x.(type) {
	case string:
		b.WriteString(pyStrRepr(t))
	case markup:
		b.WriteString("Markup(" + pyStrRepr(string(t)) + ")")
	case []any:
		writeSeqRepr(b, "[", "]", t, depth)
	case pyTuple:
		if len(t) == 1 {
			b.WriteString("(")
			writeRepr(b, t[0], depth+1)
			b.WriteString(",)")
			return
		}
		writeSeqRepr(b, "(", ")", t, depth)
	case *exec.Dict:
		writeDictRepr(b, t, depth)
	case undefined:
		b.WriteString("Undefined")
	case *namespace:
		b.WriteString("<Namespace ")
		writeDictRepr(b, t.attrs, depth)
		b.WriteString(">")
	case *generator:
		b.WriteString("<" + t.typeName + " object>")
	case *pyFunc:
		b.WriteString("<built-in method " + t.name + ">")
	case exec.Macro:
		b.WriteString("<Macro>")
	case nil, bool, int, float64:
		b.WriteString(pyStr(t))
	default:
		b.WriteString("<" + pyTypeName(x) + " object>")
	}
}

func writeSeqRepr(b *strings.Builder, open, close string, items []any, depth int) {
	b.WriteString(open)
	for i, e := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		writeRepr(b, e, depth+1)
	}
	b.WriteString(close)
}

func writeDictRepr(b *strings.Builder, d *exec.Dict, depth int) {
	b.WriteString("{")
	for i, p := range d.Pairs {
		if i > 0 {
			b.WriteString(", ")
		}
		writeRepr(b, norm(p.Key), depth+1)
		b.WriteString(": ")
		writeRepr(b, norm(p.Value), depth+1)
	}
	b.WriteString("}")
}

// floatRepr is Python's repr(float): shortest round-trip digits, fixed
// notation for exponents in [-4, 16), always with a decimal point.
func floatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(s[strings.IndexByte(s, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return s
	}
	s = strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsRune(s, '.') {
		s += ".0"
	}
	return s
}

// pyStrRepr is repr(str): single quotes unless the text has ' and no ".
func pyStrRepr(s string) string {
	quote := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	var b strings.Builder
	b.WriteRune(quote)
	for _, r := range s {
		switch {
		case r == quote || r == '\\':
			b.WriteRune('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError || unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteRune(quote)
	return b.String()
}

// pyEq is Python's ==.
func pyEq(a, b any) bool {
	if ai, af, aIsF, ok := asNumber(a); ok {
		bi, bf, bIsF, ok := asNumber(b)
		if !ok {
			return false
		}
		if aIsF || bIsF {
			return af == bf
		}
		return ai == bi
	}
	if as, ok := asString(a); ok {
		bs, ok := asString(b)
		return ok && as == bs
	}
	switch at := a.(type) {
	case nil:
		return b == nil
	case []any:
		bt, ok := b.([]any)
		return ok && seqEq(at, bt)
	case pyTuple:
		bt, ok := b.(pyTuple)
		return ok && seqEq(at, bt)
	case *exec.Dict:
		bt, ok := b.(*exec.Dict)
		return ok && dictEq(at, bt)
	case undefined:
		_, ok := b.(undefined)
		return ok
	}
	return sameObject(a, b)
}

func seqEq(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !pyEq(a[i], b[i]) {
			return false
		}
	}
	return true
}

func dictEq(a, b *exec.Dict) bool {
	if len(a.Pairs) != len(b.Pairs) {
		return false
	}
	for _, p := range a.Pairs {
		v, ok := dictGet(b, norm(p.Key))
		if !ok || !pyEq(norm(p.Value), v) {
			return false
		}
	}
	return true
}

// sameObject is Python's "is" for reference types (funcs compare by code pointer).
func sameObject(a, b any) bool {
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	if !ra.IsValid() || !rb.IsValid() || ra.Type() != rb.Type() {
		return !ra.IsValid() && !rb.IsValid()
	}
	switch ra.Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Slice:
		return ra.Pointer() == rb.Pointer()
	}
	if ra.Type().Comparable() {
		return a == b
	}
	return false
}

// pyCompare orders a and b like Python's <, or fails with a TypeError.
func pyCompare(op string, a, b any) (int, error) {
	if _, af, _, ok := asNumber(a); ok {
		if _, bf, _, ok := asNumber(b); ok {
			return cmpFloat(af, bf), nil
		}
	}
	if as, ok := asString(a); ok {
		if bs, ok := asString(b); ok {
			return strings.Compare(as, bs), nil
		}
	}
	al, aok := seqOf(a)
	bl, bok := seqOf(b)
	if aok && bok && pyTypeName(a) == pyTypeName(b) {
		return seqCompare(op, al, bl)
	}
	return 0, typeError("'%s' not supported between instances of '%s' and '%s'", op, pyTypeName(a), pyTypeName(b))
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func seqCompare(op string, a, b []any) (int, error) {
	for i := 0; i < len(a) && i < len(b); i++ {
		if pyEq(a[i], b[i]) {
			continue
		}
		return pyCompare(op, a[i], b[i])
	}
	return cmpFloat(float64(len(a)), float64(len(b))), nil
}

// seqOf returns the items of a list or tuple.
func seqOf(x any) ([]any, bool) {
	switch t := x.(type) {
	case []any:
		return t, true
	case pyTuple:
		return t, true
	}
	return nil, false
}

// runeLen is len(str) in code points.
func runeLen(s string) int { return utf8.RuneCountInString(s) }
