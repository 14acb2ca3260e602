package model

import "slices"

// The prefix cache: full blocks of a pool, found by a hash over the chain
// of token blocks that leads to them (vLLM's automatic prefix caching). A
// system prompt, a chat's earlier turns or a few-shot header computed once
// is shared by reference by every later sequence that starts with the
// same tokens; a new chat turn pays prefill only for its new tokens.
//
// An entry keeps its block after the last sequence lets go of it: the
// block waits on an LRU list and is evicted (oldest first) only when a
// reservation finds no free block. A hash match is confirmed by the
// block's tokens and its parent's hash, so a 64-bit collision cannot hand
// a sequence another text's keys.

type prefixCache struct {
	blockTokens int
	index       map[uint64]int32 // chain hash → block
	hash        []uint64         // per block: its entry's chain hash (valid when has)
	parent      []uint64         // per block: the chain hash before it
	has         []bool
	toks        []int32 // per block: its tokens [blocks × blockTokens]
	prev, next  []int32 // LRU list of unreferenced cached blocks; -1 ends
	head, tail  int32   // head: least recently used
	inLRU       []bool
	lruLen      int
	hits        int64 // blocks found
}

func (c *prefixCache) init(blocks, blockTokens int) {
	c.blockTokens = blockTokens
	c.index = make(map[uint64]int32)
	c.hash, c.parent = make([]uint64, blocks), make([]uint64, blocks)
	c.has, c.inLRU = make([]bool, blocks), make([]bool, blocks)
	c.toks = make([]int32, blocks*blockTokens)
	c.prev, c.next = make([]int32, blocks), make([]int32, blocks)
	c.head, c.tail = -1, -1
}

// chainHash extends parent by one block of tokens (FNV-1a over the bytes
// of the parent hash and the token ids).
func chainHash(parent uint64, tokens []int32) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for i := 0; i < 8; i++ {
		h = (h ^ (parent >> (8 * i) & 0xff)) * prime
	}
	for _, t := range tokens {
		u := uint32(t)
		for i := 0; i < 4; i++ {
			h = (h ^ uint64(u>>(8*i)&0xff)) * prime
		}
	}
	return h
}

func (c *prefixCache) cached(b int32) bool { return c.has[b] }

// lookup returns the block holding tokens after parent, or -1.
func (c *prefixCache) lookup(parent uint64, tokens []int32) (int32, uint64) {
	h := chainHash(parent, tokens)
	b, ok := c.index[h]
	if !ok || c.parent[b] != parent || !slices.Equal(c.toks[int(b)*c.blockTokens:(int(b)+1)*c.blockTokens], tokens) {
		return -1, h
	}
	return b, h
}

// insert makes block b the entry for tokens after parent (chain hash h),
// unless another block already is.
func (c *prefixCache) insert(b int32, parent, h uint64, tokens []int32) {
	if _, dup := c.index[h]; dup || c.has[b] {
		return
	}
	c.index[h] = b
	c.hash[b], c.parent[b], c.has[b] = h, parent, true
	copy(c.toks[int(b)*c.blockTokens:], tokens)
}

// forget drops block b's entry (its contents are about to change).
func (c *prefixCache) forget(b int32) {
	if !c.has[b] {
		return
	}
	if c.inLRU[b] {
		c.unlink(b)
	}
	delete(c.index, c.hash[b])
	c.has[b] = false
}

// pushLRU appends an unreferenced cached block as the most recently used.
func (c *prefixCache) pushLRU(b int32) {
	c.prev[b], c.next[b] = c.tail, -1
	if c.tail >= 0 {
		c.next[c.tail] = b
	} else {
		c.head = b
	}
	c.tail = b
	c.inLRU[b] = true
	c.lruLen++
}

func (c *prefixCache) unlink(b int32) {
	if c.prev[b] >= 0 {
		c.next[c.prev[b]] = c.next[b]
	} else {
		c.head = c.next[b]
	}
	if c.next[b] >= 0 {
		c.prev[c.next[b]] = c.prev[b]
	} else {
		c.tail = c.prev[b]
	}
	c.inLRU[b] = false
	c.lruLen--
}

// evict takes the least recently used unreferenced cached block and drops
// its entry. The caller has checked that one exists.
func (c *prefixCache) evict() int32 {
	b := c.head
	c.forget(b)
	return b
}

// AdoptPrefix gives an empty sequence the cached blocks that hold the
// longest run of whole blocks at the start of tokens, leaving at least
// the last token to evaluate (its logits are the next step's), and
// returns the number of positions it now holds.
func (s *State) AdoptPrefix(tokens []int32) int {
	p := s.kvp
	if p == nil || s.pos != 0 || len(s.table) != 0 {
		return 0
	}
	c, b := &p.prefix, p.blockTokens
	var parent uint64
	for i := 0; (i+1)*b <= len(tokens)-1; i++ {
		blk, h := c.lookup(parent, tokens[i*b:(i+1)*b])
		if blk < 0 {
			break
		}
		if p.ref[blk] == 0 {
			c.unlink(blk)
		}
		p.ref[blk]++
		c.hits++
		s.table = append(s.table, blk)
		s.hashes = append(s.hashes, h)
		parent = h
	}
	s.pos = len(s.table) * b
	return s.pos
}

// Register enters the sequence's full blocks into the prefix cache;
// tokens are the tokens at positions [0, len(tokens)) (at most Pos()).
func (s *State) Register(tokens []int32) {
	p := s.kvp
	if p == nil {
		return
	}
	c, b := &p.prefix, p.blockTokens
	n := min(len(tokens), s.pos) / b
	for i := len(s.hashes); i < n; i++ {
		var parent uint64
		if i > 0 {
			parent = s.hashes[i-1]
		}
		blk := tokens[i*b : (i+1)*b]
		h := chainHash(parent, blk)
		c.insert(s.table[i], parent, h, blk)
		s.hashes = append(s.hashes, h)
	}
}

// PrefixHits is the number of blocks sequences found in the prefix cache.
func (p *KVPool) PrefixHits() int64 { return p.prefix.hits }

func (s *State) prefixReset() { s.hashes = s.hashes[:0] }

func (s *State) prefixTruncate(n int) {
	s.hashes = s.hashes[:min(len(s.hashes), n/s.kvp.blockTokens)]
}

func (s *State) prefixCopy(from *State) { s.hashes = append(s.hashes[:0], from.hashes...) }
