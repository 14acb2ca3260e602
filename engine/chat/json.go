package chat

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// The tojson filter of Hugging Face's chat-template environment:
//
//	json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
//
// reproduced byte for byte: ", " and ": " separators (",", ": " once indent
// is set), dict keys in insertion order, floats as Python's repr.

type jsonEncoder struct {
	b        strings.Builder
	indent   *string // nil: one line
	itemSep  string
	keySep   string
	sortKeys bool
	ascii    bool
}

func filterToJSON(_ cx, in any, args []any, kw map[string]any) (any, error) {
	a, err := bind("tojson", args, kw, p("ensure_ascii", false), p("indent", nil),
		p("separators", nil), p("sort_keys", false))
	if err != nil {
		return nil, err
	}
	enc := &jsonEncoder{itemSep: ", ", keySep: ": ", ascii: truth(a[0]), sortKeys: truth(a[3])}
	if err := enc.setIndent(a[1]); err != nil {
		return nil, err
	}
	if err := enc.setSeparators(a[2]); err != nil {
		return nil, err
	}
	if err := enc.value(in, 0); err != nil {
		return nil, err
	}
	return enc.b.String(), nil
}

func (enc *jsonEncoder) setIndent(x any) error {
	if x == nil {
		return nil
	}
	s, ok := asString(x)
	if !ok {
		n, ok := repeatCount(x)
		if !ok {
			return typeError("can't multiply sequence by non-int of type '%s'", pyTypeName(x))
		}
		s = strings.Repeat(" ", min(max(n, 0), 1024))
	}
	enc.indent, enc.itemSep = &s, ","
	return nil
}

func (enc *jsonEncoder) setSeparators(x any) error {
	if x == nil {
		return nil
	}
	seps, ok := seqOf(x)
	if !ok || len(seps) != 2 {
		return valueError("separators must be an (item_separator, key_separator) pair")
	}
	item, ok1 := asString(seps[0])
	key, ok2 := asString(seps[1])
	if !ok1 || !ok2 {
		return typeError("separators must be strings")
	}
	enc.itemSep, enc.keySep = item, key
	return nil
}

func (enc *jsonEncoder) value(x any, level int) error {
	if level > maxDepth {
		return &Error{Kind: "RecursionError", Msg: "maximum recursion depth exceeded while encoding a JSON object"}
	}
	if enc.b.Len() > maxStringBytes {
		return errTooLong
	}
	switch t := x.(type) {
	case nil:
		enc.b.WriteString("null")
	case bool:
		enc.b.WriteString(map[bool]string{true: "true", false: "false"}[t])
	case int:
		enc.b.WriteString(strconv.Itoa(t))
	case float64:
		enc.b.WriteString(jsonFloat(t))
	case string:
		enc.str(t)
	case markup:
		enc.str(string(t))
	case []any:
		return enc.array(t, level)
	case pyTuple:
		return enc.array(t, level)
	case *exec.Dict:
		return enc.object(t, level)
	default:
		return typeError("Object of type %s is not JSON serializable", pyTypeName(x))
	}
	return nil
}

func jsonFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return floatRepr(f)
}

// newline starts an indented line at level, when indenting.
func (enc *jsonEncoder) newline(level int) {
	if enc.indent != nil {
		enc.b.WriteByte('\n')
		for range level {
			enc.b.WriteString(*enc.indent)
		}
	}
}

func (enc *jsonEncoder) array(items []any, level int) error {
	if len(items) == 0 {
		enc.b.WriteString("[]")
		return nil
	}
	enc.b.WriteByte('[')
	for i, x := range items {
		if i > 0 {
			enc.b.WriteString(enc.itemSep)
		}
		enc.newline(level + 1)
		if err := enc.value(normAny(x), level+1); err != nil {
			return err
		}
	}
	enc.newline(level)
	enc.b.WriteByte(']')
	return nil
}

func (enc *jsonEncoder) object(d *exec.Dict, level int) error {
	if len(d.Pairs) == 0 {
		enc.b.WriteString("{}")
		return nil
	}
	items := dictItems(d)
	if enc.sortKeys {
		if err := sortPairs(items); err != nil {
			return err
		}
	}
	enc.b.WriteByte('{')
	for i, it := range items {
		kv := it.(pyTuple)
		key, err := jsonKey(kv[0])
		if err != nil {
			return err
		}
		if i > 0 {
			enc.b.WriteString(enc.itemSep)
		}
		enc.newline(level + 1)
		enc.str(key)
		enc.b.WriteString(enc.keySep)
		if err := enc.value(kv[1], level+1); err != nil {
			return err
		}
	}
	enc.newline(level)
	enc.b.WriteByte('}')
	return nil
}

// sortPairs sorts (key, value) tuples by key, as sorted(d.items()) does.
func sortPairs(items []any) error {
	var err error
	sort.SliceStable(items, func(i, j int) bool {
		c, e := pyCompare("<", items[i].(pyTuple)[0], items[j].(pyTuple)[0])
		if e != nil && err == nil {
			err = e
		}
		return c < 0
	})
	return err
}

// jsonKey converts a dict key the way json.dumps does.
func jsonKey(k any) (string, error) {
	switch t := k.(type) {
	case string:
		return t, nil
	case markup:
		return string(t), nil
	case nil, bool:
		return map[any]string{nil: "null", true: "true", false: "false"}[t], nil
	case int:
		return strconv.Itoa(t), nil
	case float64:
		return jsonFloat(t), nil
	}
	return "", typeError("keys must be str, int, float, bool or None, not %s", pyTypeName(k))
}

// str writes a JSON string literal with json.dumps's escapes.
func (enc *jsonEncoder) str(s string) {
	enc.b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			enc.b.WriteString(`\"`)
		case r == '\\':
			enc.b.WriteString(`\\`)
		case r == '\n':
			enc.b.WriteString(`\n`)
		case r == '\r':
			enc.b.WriteString(`\r`)
		case r == '\t':
			enc.b.WriteString(`\t`)
		case r == '\b':
			enc.b.WriteString(`\b`)
		case r == '\f':
			enc.b.WriteString(`\f`)
		case r < 0x20 || (enc.ascii && r > '~'):
			enc.unicodeEscape(r)
		default:
			enc.b.WriteRune(r)
		}
	}
	enc.b.WriteByte('"')
}

func (enc *jsonEncoder) unicodeEscape(r rune) {
	if r < 0x10000 {
		fmt.Fprintf(&enc.b, `\u%04x`, r)
		return
	}
	hi, lo := utf16.EncodeRune(r)
	fmt.Fprintf(&enc.b, `\u%04x\u%04x`, hi, lo)
}
