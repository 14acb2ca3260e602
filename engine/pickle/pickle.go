// Package pickle reads PyTorch checkpoints without Python and without
// executing anything they contain.
//
// A PyTorch checkpoint is a Python pickle: a small stack-machine program
// whose GLOBAL/STACK_GLOBAL opcodes name any importable callable and whose
// REDUCE opcode calls it, which is how a malicious file runs code when
// Python loads it. The Unpickler here interprets the opcodes itself and
// resolves every global through an allow-list of plain Go functions; any
// other global is refused by name at the opcode that names it, before
// anything could call it. The allow-list for state dicts (torch.go) holds
// collections.OrderedDict, the torch._utils._rebuild_tensor family and
// the typed storage classes; nothing else.
package pickle

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// ErrForbidden is wrapped when a pickle names a global outside the
// allow-list; the message names the global.
var ErrForbidden = errors.New("pickle: forbidden global")

// ErrFormat is wrapped for malformed or unsupported pickle data.
var ErrFormat = errors.New("pickle: malformed data")

// Python values are represented as: nil (None), bool, int64, *big.Int,
// float64, string (str), []byte (bytes, bytearray), Tuple, *List, *Dict,
// and whatever the allowed callables return.
type (
	// Tuple is a Python tuple.
	Tuple []any
	// List is a Python list (a pointer: APPENDS mutates it in place).
	List struct{ Items []any }
	// Dict is a Python dict or OrderedDict, in insertion order.
	Dict struct {
		Keys, Values []any
		byStr        map[string]int // index of string keys
		// State is what a BUILD opcode set on the object (an
		// OrderedDict's instance __dict__, e.g. a state dict's _metadata).
		State any
	}
	// Set is a Python set or frozenset.
	Set struct{ Items []any }
)

// NewDict returns an empty dict.
func NewDict() *Dict { return &Dict{byStr: map[string]int{}} }

// Set stores d[k] = v.
func (d *Dict) Set(k, v any) {
	if s, ok := k.(string); ok {
		if i, ok := d.byStr[s]; ok {
			d.Values[i] = v
			return
		}
		d.byStr[s] = len(d.Keys)
	}
	d.Keys = append(d.Keys, k)
	d.Values = append(d.Values, v)
}

// Get returns d[k] for a string key.
func (d *Dict) Get(k string) (any, bool) {
	i, ok := d.byStr[k]
	if !ok {
		return nil, false
	}
	return d.Values[i], true
}

// Callable is an allowed global: a Go function standing in for the Python
// callable of the same name. It receives REDUCE's argument tuple.
type Callable struct {
	Name string
	Call func(args Tuple) (any, error) // nil: not callable
	// Value is what the global denotes when a pickle uses it as data
	// rather than calling it (a storage class inside a persistent id).
	Value any
}

// Resolver returns the Go stand-in for module.name, or an error wrapping
// ErrForbidden. Every global a pickle names goes through it.
type Resolver func(module, name string) (*Callable, error)

// PersistentLoader turns a persistent id (PyTorch: a storage reference
// tuple) into an object.
type PersistentLoader func(pid any) (any, error)

// Unpickler interprets one pickle program.
type Unpickler struct {
	data    []byte
	pos     int
	stack   []any
	marks   []int
	memo    map[uint64]any
	resolve Resolver
	persist PersistentLoader
}

// maxMemo bounds the memo table; one entry per opcode is the most a file
// can make anyway, this only stops absurd indices from costing memory.
const maxMemo = 1 << 24

// Load runs the pickle at the start of data and returns the object it
// builds and the number of bytes it used (pickles can be concatenated).
func Load(data []byte, resolve Resolver, persist PersistentLoader) (obj any, n int, err error) {
	u := &Unpickler{data: data, memo: map[uint64]any{}, resolve: resolve, persist: persist}
	obj, err = u.run()
	if err != nil {
		return nil, u.pos, fmt.Errorf("at byte %d: %w", u.pos, err)
	}
	return obj, u.pos, nil
}

func (u *Unpickler) run() (any, error) {
	for {
		if u.pos >= len(u.data) {
			return nil, fmt.Errorf("%w: no STOP opcode before the end", ErrFormat)
		}
		op := u.data[u.pos]
		u.pos++
		if op == '.' { // STOP
			if len(u.stack) != 1 {
				return nil, fmt.Errorf("%w: STOP with %d objects on the stack", ErrFormat, len(u.stack))
			}
			return u.stack[0], nil
		}
		if err := u.step(op); err != nil {
			return nil, err
		}
	}
}

func (u *Unpickler) step(op byte) error {
	if h := handlers[op]; h != nil {
		return h(u)
	}
	return fmt.Errorf("%w: opcode 0x%02x (%q) is not supported", ErrFormat, op, op)
}

// take returns the next n bytes of input.
func (u *Unpickler) take(n uint64) ([]byte, error) {
	if n > uint64(len(u.data)-u.pos) {
		return nil, fmt.Errorf("%w: %d bytes wanted, %d left", ErrFormat, n, len(u.data)-u.pos)
	}
	b := u.data[u.pos : u.pos+int(n)]
	u.pos += int(n)
	return b, nil
}

// line reads up to and excluding the next '\n' (text protocol 0 opcodes).
func (u *Unpickler) line() (string, error) {
	i := strings.IndexByte(string(u.data[u.pos:min(len(u.data), u.pos+1<<20)]), '\n')
	if i < 0 {
		return "", fmt.Errorf("%w: unterminated text argument", ErrFormat)
	}
	s := string(u.data[u.pos : u.pos+i])
	u.pos += i + 1
	return s, nil
}

func (u *Unpickler) push(v any) { u.stack = append(u.stack, v) }

func (u *Unpickler) pop() (any, error) {
	if len(u.stack) == 0 || (len(u.marks) > 0 && len(u.stack) <= u.marks[len(u.marks)-1]) {
		return nil, fmt.Errorf("%w: stack underflow", ErrFormat)
	}
	v := u.stack[len(u.stack)-1]
	u.stack = u.stack[:len(u.stack)-1]
	return v, nil
}

func (u *Unpickler) top() (any, error) {
	if len(u.stack) == 0 {
		return nil, fmt.Errorf("%w: stack underflow", ErrFormat)
	}
	return u.stack[len(u.stack)-1], nil
}

// popMark pops everything above the last MARK and the mark itself.
func (u *Unpickler) popMark() ([]any, error) {
	if len(u.marks) == 0 {
		return nil, fmt.Errorf("%w: no MARK", ErrFormat)
	}
	m := u.marks[len(u.marks)-1]
	u.marks = u.marks[:len(u.marks)-1]
	items := append([]any(nil), u.stack[m:]...)
	u.stack = u.stack[:m]
	return items, nil
}

// global resolves module.name through the allow-list.
func (u *Unpickler) global(module, name string) error {
	if u.resolve == nil {
		return fmt.Errorf("%w %s.%s", ErrForbidden, module, name)
	}
	c, err := u.resolve(module, name)
	if err != nil {
		return err
	}
	u.push(c)
	return nil
}

// call applies an allowed callable to args (REDUCE, NEWOBJ, OBJ, INST).
func (u *Unpickler) call(f any, args any) error {
	c, ok := f.(*Callable)
	if !ok || c.Call == nil {
		return fmt.Errorf("%w: call of a %T, not an allowed global", ErrFormat, f)
	}
	t, ok := args.(Tuple)
	if !ok {
		return fmt.Errorf("%w: %s called with %T arguments", ErrFormat, c.Name, args)
	}
	v, err := c.Call(t)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	u.push(v)
	return nil
}

func (u *Unpickler) memoPut(i uint64) error {
	v, err := u.top()
	if err != nil {
		return err
	}
	if i >= maxMemo {
		return fmt.Errorf("%w: memo index %d", ErrFormat, i)
	}
	u.memo[i] = v
	return nil
}

func (u *Unpickler) memoGet(i uint64) error {
	v, ok := u.memo[i]
	if !ok {
		return fmt.Errorf("%w: memo %d is empty", ErrFormat, i)
	}
	u.push(v)
	return nil
}

// Int converts a pickled integer to int64.
func Int(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case *big.Int:
		if x.IsInt64() {
			return x.Int64(), true
		}
	}
	return 0, false
}
