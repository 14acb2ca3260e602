package pickle

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// handlers maps each supported opcode to its action. Opcodes that need the
// extension registry (EXT1/2/4) or out-of-band buffers are not supported.
var handlers [256]func(*Unpickler) error

func init() {
	h := &handlers
	// framing and stack control
	h[0x80] = func(u *Unpickler) error { _, err := u.take(1); return err } // PROTO
	h[0x95] = func(u *Unpickler) error { _, err := u.take(8); return err } // FRAME: framing is only a hint
	h['('] = func(u *Unpickler) error { u.marks = append(u.marks, len(u.stack)); return nil }
	h['0'] = func(u *Unpickler) error { _, err := u.pop(); return err }
	h['1'] = func(u *Unpickler) error { _, err := u.popMark(); return err }
	h['2'] = func(u *Unpickler) error {
		v, err := u.top()
		u.push(v)
		return err
	}
	// constants and numbers
	h['N'] = func(u *Unpickler) error { u.push(nil); return nil }
	h[0x88] = func(u *Unpickler) error { u.push(true); return nil }
	h[0x89] = func(u *Unpickler) error { u.push(false); return nil }
	h['J'] = func(u *Unpickler) error { return u.fixedInt(4, true) }
	h['K'] = func(u *Unpickler) error { return u.fixedInt(1, false) }
	h['M'] = func(u *Unpickler) error { return u.fixedInt(2, false) }
	h[0x8a] = func(u *Unpickler) error { return u.long(1) }
	h[0x8b] = func(u *Unpickler) error { return u.long(4) }
	h['I'] = opTextInt
	h['L'] = opTextInt
	h['F'] = opTextFloat
	h['G'] = func(u *Unpickler) error {
		b, err := u.take(8)
		if err == nil {
			u.push(math.Float64frombits(binary.BigEndian.Uint64(b)))
		}
		return err
	}
	// strings and bytes
	h['X'] = func(u *Unpickler) error { return u.sized(4, pushStr) }
	h[0x8c] = func(u *Unpickler) error { return u.sized(1, pushStr) }
	h[0x8d] = func(u *Unpickler) error { return u.sized(8, pushStr) }
	h['B'] = func(u *Unpickler) error { return u.sized(4, pushBytes) }
	h['C'] = func(u *Unpickler) error { return u.sized(1, pushBytes) }
	h[0x8e] = func(u *Unpickler) error { return u.sized(8, pushBytes) }
	h[0x96] = func(u *Unpickler) error { return u.sized(8, pushBytes) } // BYTEARRAY8
	h['T'] = func(u *Unpickler) error { return u.sized(4, pushBytes) }  // BINSTRING (py2 str)
	h['U'] = func(u *Unpickler) error { return u.sized(1, pushBytes) }  // SHORT_BINSTRING
	h['S'] = opTextString
	h['V'] = opTextUnicode
	// containers
	h[')'] = func(u *Unpickler) error { u.push(Tuple{}); return nil }
	h[']'] = func(u *Unpickler) error { u.push(&List{}); return nil }
	h['}'] = func(u *Unpickler) error { u.push(NewDict()); return nil }
	h[0x8f] = func(u *Unpickler) error { u.push(&Set{}); return nil }
	h['t'] = func(u *Unpickler) error {
		items, err := u.popMark()
		u.push(Tuple(items))
		return err
	}
	h[0x85] = func(u *Unpickler) error { return u.tupleN(1) }
	h[0x86] = func(u *Unpickler) error { return u.tupleN(2) }
	h[0x87] = func(u *Unpickler) error { return u.tupleN(3) }
	h['l'] = func(u *Unpickler) error {
		items, err := u.popMark()
		u.push(&List{Items: items})
		return err
	}
	h['d'] = func(u *Unpickler) error {
		items, err := u.popMark()
		if err != nil {
			return err
		}
		d := NewDict()
		u.push(d)
		return setItems(d, items)
	}
	h[0x91] = func(u *Unpickler) error {
		items, err := u.popMark()
		u.push(&Set{Items: items})
		return err
	}
	h['a'] = opAppend
	h['e'] = opAppends
	h['s'] = opSetItem
	h['u'] = opSetItems
	h[0x90] = opAddItems
	// memo
	h['q'] = func(u *Unpickler) error { return u.memoArg(1, u.memoPut) }
	h['r'] = func(u *Unpickler) error { return u.memoArg(4, u.memoPut) }
	h['h'] = func(u *Unpickler) error { return u.memoArg(1, u.memoGet) }
	h['j'] = func(u *Unpickler) error { return u.memoArg(4, u.memoGet) }
	h['p'] = func(u *Unpickler) error { return u.memoText(u.memoPut) }
	h['g'] = func(u *Unpickler) error { return u.memoText(u.memoGet) }
	h[0x94] = func(u *Unpickler) error { return u.memoPut(uint64(len(u.memo))) }
	// globals, calls, persistence
	h['c'] = opGlobal
	h[0x93] = opStackGlobal
	h['i'] = opInst
	h['o'] = opObj
	h['R'] = opReduce
	h[0x81] = opNewObj
	h[0x92] = opNewObjEx
	h['b'] = opBuild
	h['Q'] = opBinPersID
	h['P'] = opPersID
}

func (u *Unpickler) fixedInt(n int, signed bool) error {
	b, err := u.take(uint64(n))
	if err != nil {
		return err
	}
	var v int64
	switch {
	case n == 1:
		v = int64(b[0])
	case n == 2:
		v = int64(binary.LittleEndian.Uint16(b))
	case signed:
		v = int64(int32(binary.LittleEndian.Uint32(b)))
	}
	u.push(v)
	return nil
}

// long reads LONG1/LONG4: a byte count then a little-endian two's
// complement integer.
func (u *Unpickler) long(lenBytes int) error {
	b, err := u.take(uint64(lenBytes))
	if err != nil {
		return err
	}
	n := uint64(b[0])
	if lenBytes == 4 {
		n = uint64(binary.LittleEndian.Uint32(b))
	}
	digits, err := u.take(n)
	if err != nil {
		return err
	}
	u.push(decodeLong(digits))
	return nil
}

func decodeLong(b []byte) any {
	if len(b) == 0 {
		return int64(0)
	}
	if len(b) <= 8 {
		var v uint64
		for i := len(b) - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		shift := 64 - 8*uint(len(b))
		return int64(v<<shift) >> shift
	}
	be := make([]byte, len(b))
	for i := range b {
		be[len(b)-1-i] = b[i]
	}
	x := new(big.Int).SetBytes(be)
	if b[len(b)-1]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	if x.IsInt64() {
		return x.Int64()
	}
	return x
}

func opTextInt(u *Unpickler) error {
	s, err := u.line()
	if err != nil {
		return err
	}
	s = strings.TrimSuffix(s, "L")
	switch s {
	case "00":
		u.push(false)
		return nil
	case "01":
		u.push(true)
		return nil
	}
	if len(s) > 4096 {
		return fmt.Errorf("%w: integer literal of %d digits", ErrFormat, len(s))
	}
	x, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return fmt.Errorf("%w: integer %q", ErrFormat, s)
	}
	if x.IsInt64() {
		u.push(x.Int64())
	} else {
		u.push(x)
	}
	return nil
}

func opTextFloat(u *Unpickler) error {
	s, err := u.line()
	if err != nil {
		return err
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%w: float %q", ErrFormat, s)
	}
	u.push(f)
	return nil
}

// sized reads a length-prefixed string or bytes object.
func (u *Unpickler) sized(lenBytes int, push func(*Unpickler, []byte)) error {
	b, err := u.take(uint64(lenBytes))
	if err != nil {
		return err
	}
	var n uint64
	switch lenBytes {
	case 1:
		n = uint64(b[0])
	case 4:
		n = uint64(binary.LittleEndian.Uint32(b))
	default:
		n = binary.LittleEndian.Uint64(b)
	}
	body, err := u.take(n)
	if err != nil {
		return err
	}
	push(u, body)
	return nil
}

func pushStr(u *Unpickler, b []byte) { u.push(string(b)) }

func pushBytes(u *Unpickler, b []byte) { u.push(append([]byte(nil), b...)) }

// opTextString is protocol 0's STRING: a quoted Python literal.
func opTextString(u *Unpickler) error {
	s, err := u.line()
	if err != nil {
		return err
	}
	if len(s) < 2 || (s[0] != '\'' && s[0] != '"') || s[len(s)-1] != s[0] {
		return fmt.Errorf("%w: STRING argument %q is not quoted", ErrFormat, s)
	}
	b, err := unescape(s[1 : len(s)-1])
	u.push(b)
	return err
}

// opTextUnicode is protocol 0's UNICODE: raw-unicode-escape text.
func opTextUnicode(u *Unpickler) error {
	s, err := u.line()
	if err != nil {
		return err
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U') {
			n := map[byte]int{'u': 4, 'U': 8}[s[i+1]]
			if i+2+n <= len(s) {
				if r, err := strconv.ParseUint(s[i+2:i+2+n], 16, 32); err == nil && utf8.ValidRune(rune(r)) {
					sb.WriteRune(rune(r))
					i += 1 + n
					continue
				}
			}
		}
		sb.WriteRune(rune(s[i])) // latin-1
	}
	u.push(sb.String())
	return nil
}

// unescape decodes the backslash escapes of a Python bytes literal.
func unescape(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			out = append(out, c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'x':
			if i+3 > len(s) {
				return out, fmt.Errorf("%w: bad \\x escape", ErrFormat)
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return out, fmt.Errorf("%w: bad \\x escape", ErrFormat)
			}
			out = append(out, byte(v))
			i += 2
		default:
			out = append(out, s[i])
		}
	}
	return out, nil
}

func (u *Unpickler) tupleN(n int) error {
	if len(u.stack) < n || (len(u.marks) > 0 && len(u.stack)-n < u.marks[len(u.marks)-1]) {
		return fmt.Errorf("%w: stack underflow", ErrFormat)
	}
	t := append(Tuple(nil), u.stack[len(u.stack)-n:]...)
	u.stack = u.stack[:len(u.stack)-n]
	u.push(t)
	return nil
}

func opAppend(u *Unpickler) error {
	v, err := u.pop()
	if err != nil {
		return err
	}
	return appendTo(u, []any{v})
}

func opAppends(u *Unpickler) error {
	items, err := u.popMark()
	if err != nil {
		return err
	}
	return appendTo(u, items)
}

func appendTo(u *Unpickler, items []any) error {
	top, err := u.top()
	if err != nil {
		return err
	}
	l, ok := top.(*List)
	if !ok {
		return fmt.Errorf("%w: APPEND to a %T", ErrFormat, top)
	}
	l.Items = append(l.Items, items...)
	return nil
}

func opAddItems(u *Unpickler) error {
	items, err := u.popMark()
	if err != nil {
		return err
	}
	top, err := u.top()
	if err != nil {
		return err
	}
	s, ok := top.(*Set)
	if !ok {
		return fmt.Errorf("%w: ADDITEMS to a %T", ErrFormat, top)
	}
	s.Items = append(s.Items, items...)
	return nil
}

func opSetItem(u *Unpickler) error {
	v, err := u.pop()
	if err != nil {
		return err
	}
	k, err := u.pop()
	if err != nil {
		return err
	}
	return setTop(u, []any{k, v})
}

func opSetItems(u *Unpickler) error {
	items, err := u.popMark()
	if err != nil {
		return err
	}
	return setTop(u, items)
}

func setTop(u *Unpickler, kv []any) error {
	top, err := u.top()
	if err != nil {
		return err
	}
	d, ok := top.(*Dict)
	if !ok {
		return fmt.Errorf("%w: SETITEM on a %T", ErrFormat, top)
	}
	return setItems(d, kv)
}

func setItems(d *Dict, kv []any) error {
	if len(kv)%2 != 0 {
		return fmt.Errorf("%w: odd number of dict items", ErrFormat)
	}
	for i := 0; i < len(kv); i += 2 {
		d.Set(kv[i], kv[i+1])
	}
	return nil
}

func (u *Unpickler) memoArg(n int, f func(uint64) error) error {
	b, err := u.take(uint64(n))
	if err != nil {
		return err
	}
	i := uint64(b[0])
	if n == 4 {
		i = uint64(binary.LittleEndian.Uint32(b))
	}
	return f(i)
}

func (u *Unpickler) memoText(f func(uint64) error) error {
	s, err := u.line()
	if err != nil {
		return err
	}
	i, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: memo index %q", ErrFormat, s)
	}
	return f(i)
}

func opGlobal(u *Unpickler) error {
	module, err := u.line()
	if err != nil {
		return err
	}
	name, err := u.line()
	if err != nil {
		return err
	}
	return u.global(module, name)
}

func opStackGlobal(u *Unpickler) error {
	name, err := u.pop()
	if err != nil {
		return err
	}
	module, err := u.pop()
	if err != nil {
		return err
	}
	ms, ok1 := module.(string)
	ns, ok2 := name.(string)
	if !ok1 || !ok2 {
		return fmt.Errorf("%w: STACK_GLOBAL of %T, %T", ErrFormat, module, name)
	}
	return u.global(ms, ns)
}

// opInst is protocol 0's INST: a class named inline, called with the
// items above the mark.
func opInst(u *Unpickler) error {
	if err := opGlobal(u); err != nil {
		return err
	}
	cls, _ := u.pop()
	items, err := u.popMark()
	if err != nil {
		return err
	}
	return u.call(cls, Tuple(items))
}

func opObj(u *Unpickler) error {
	items, err := u.popMark()
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return fmt.Errorf("%w: OBJ without a class", ErrFormat)
	}
	return u.call(items[0], Tuple(items[1:]))
}

func opReduce(u *Unpickler) error {
	args, err := u.pop()
	if err != nil {
		return err
	}
	f, err := u.pop()
	if err != nil {
		return err
	}
	return u.call(f, args)
}

func opNewObj(u *Unpickler) error { return opReduce(u) } // cls.__new__(cls, *args)

func opNewObjEx(u *Unpickler) error {
	kwargs, err := u.pop()
	if err != nil {
		return err
	}
	if d, ok := kwargs.(*Dict); !ok || len(d.Keys) > 0 {
		return fmt.Errorf("%w: NEWOBJ_EX with keyword arguments", ErrFormat)
	}
	return opReduce(u)
}

// opBuild sets an object's state; only dicts (OrderedDict's instance
// attributes) take one here.
func opBuild(u *Unpickler) error {
	state, err := u.pop()
	if err != nil {
		return err
	}
	top, err := u.top()
	if err != nil {
		return err
	}
	if b, ok := top.(interface{ SetState(any) error }); ok {
		return b.SetState(state)
	}
	return fmt.Errorf("%w: BUILD on a %T", ErrFormat, top)
}

// SetState keeps BUILD's state (an OrderedDict's __dict__).
func (d *Dict) SetState(s any) error { d.State = s; return nil }

func opBinPersID(u *Unpickler) error {
	pid, err := u.pop()
	if err != nil {
		return err
	}
	return u.persistent(pid)
}

func opPersID(u *Unpickler) error {
	s, err := u.line()
	if err != nil {
		return err
	}
	return u.persistent(s)
}

func (u *Unpickler) persistent(pid any) error {
	if u.persist == nil {
		return fmt.Errorf("%w: persistent id without a loader", ErrFormat)
	}
	v, err := u.persist(pid)
	if err != nil {
		return err
	}
	u.push(v)
	return nil
}
