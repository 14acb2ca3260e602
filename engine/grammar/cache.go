package grammar

import "encoding/binary"

// Cache memoizes a Matcher's byte transitions, as a lazily built DFA over
// the matcher's states: a state is interned by its content and numbered,
// and where each byte leads from it is computed once. A walk of a
// vocabulary trie then costs one table lookup per edge, and a later walk
// from a state seen before computes nothing: inside a JSON string nearly
// every byte leads back to the same state.
//
// A Cache belongs to one Matcher and, like it, is not safe for concurrent
// use. Its states are the heap states AdvanceByte returns.
type Cache struct {
	m      *Matcher
	states []State
	next   [][256]int32 // by state id and byte: a state id, refused, or unknown
	index  map[string]int32
	key    []byte
	max    int // Trim's bound on the states held
}

const (
	refused int32 = -1
	unknown int32 = -2
)

// NewCache returns an empty cache of m's transitions that Trim keeps
// under maxStates states (each costs 1 KiB of transitions).
func NewCache(m *Matcher, maxStates int) *Cache {
	return &Cache{m: m, index: map[string]int32{}, max: maxStates}
}

// ID interns s: equal states (the same parses in the same order, the same
// partial code point) get the same id.
func (c *Cache) ID(s State) int32 {
	c.key = c.key[:0]
	c.key = binary.LittleEndian.AppendUint32(c.key, s.part.val)
	c.key = append(c.key, byte(s.part.rem), byte(s.part.n))
	for _, st := range s.stacks {
		c.key = binary.LittleEndian.AppendUint32(c.key, uint32(len(st)))
		for _, x := range st {
			c.key = binary.LittleEndian.AppendUint32(c.key, uint32(x))
		}
	}
	if id, ok := c.index[string(c.key)]; ok {
		return id
	}
	id := int32(len(c.states))
	c.index[string(c.key)] = id
	c.states = append(c.states, s)
	c.next = append(c.next, [256]int32{})
	for i := range c.next[id] {
		c.next[id][i] = unknown
	}
	return id
}

// State is the state numbered id.
func (c *Cache) State(id int32) State { return c.states[id] }

// Next is the state byte b leads to from state id, or -1 when no parse
// can take b (AdvanceByte's ok false).
func (c *Cache) Next(id int32, b byte) int32 {
	n := c.next[id][b]
	if n == unknown {
		n = refused
		if s, ok := c.m.AdvanceByte(c.states[id], b); ok {
			n = c.ID(s)
		}
		c.next[id][b] = n
	}
	return n
}

// Len is the number of states held.
func (c *Cache) Len() int { return len(c.states) }

// Trim empties the cache when it holds more than its bound; ids taken
// before a Trim are invalid after it, so call it between walks.
func (c *Cache) Trim() {
	if len(c.states) <= c.max {
		return
	}
	clear(c.index)
	c.states, c.next = c.states[:0], c.next[:0]
}
