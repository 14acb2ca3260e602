package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// fromGo converts a caller's value (Options.Extra) to the Python object
// model. Maps become dicts with sorted keys (Go maps have no order);
// json.RawMessage keeps the order of its object keys, as Python's json.loads
// does; other types (structs...) go through encoding/json.
func fromGo(x any) (any, error) {
	switch t := x.(type) {
	case nil, bool, string:
		return t, nil
	case json.Number:
		return jsonNumber(t)
	case json.RawMessage:
		return decodeJSON(t)
	case Message:
		return messageDict(t), nil
	case []Message:
		return messagesValue(t), nil
	case []any:
		return fromGoSlice(t)
	case map[string]any:
		return fromGoMap(t)
	}
	rv := reflect.ValueOf(x)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Float32, reflect.Float64:
		return normReflect(rv), nil
	}
	b, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	return decodeJSON(b)
}

func fromGoSlice(s []any) (any, error) {
	out := make([]any, len(s))
	for i, x := range s {
		v, err := fromGo(x)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func fromGoMap(m map[string]any) (any, error) {
	conv := make(map[string]any, len(m))
	for k, x := range m {
		v, err := fromGo(x)
		if err != nil {
			return nil, err
		}
		conv[k] = v
	}
	return dictFromMap(conv), nil
}

// decodeJSON is json.loads: objects become insertion-ordered dicts, integers
// ints and other numbers floats.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return decodeObject(dec)
		}
		return decodeArray(dec)
	case json.Number:
		return jsonNumber(t)
	}
	return tok, nil // string, bool or nil
}

func decodeObject(dec *json.Decoder) (any, error) {
	d := exec.NewDict()
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		v, err := decodeValue(dec)
		if err != nil {
			return nil, err
		}
		dictSet(d, k.(string), v)
	}
	_, err := dec.Token() // '}'
	return d, err
}

func decodeArray(dec *json.Decoder) (any, error) {
	out := []any{}
	for dec.More() {
		v, err := decodeValue(dec)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	_, err := dec.Token() // ']'
	return out, err
}

// jsonNumber parses like Python's json: no fraction or exponent means int.
// Integers beyond int64 (unbounded in Python) become floats.
func jsonNumber(n json.Number) (any, error) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return int(i), nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return nil, err
	}
	return f, nil
}
