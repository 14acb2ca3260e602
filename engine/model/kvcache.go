package model

import (
	"fmt"

	"flowchat/engine/ggml"
)

// kvQuant is a KV cache stored in F16 or Q8_0 rows (Inferflow's
// host_kv_cache_data_type) instead of the float32 caches of State: half or
// about a quarter of the memory, for a rounding of every cached key and
// value. Rows are written as llama.cpp writes its F16/Q8_0 caches
// (ggml-cpu's conversion of each row); attention reads back one head slice
// at a time into a per-worker scratch buffer.
type kvQuant struct {
	typ    ggml.Type
	k, v   [][]byte    // [layer][nCtx rows of typ.RowSize(kvDim|vDim)]
	kRow   int         // bytes per key row
	vRow   int         // bytes per value row
	kv     [][]float32 // per worker: [HeadDim] key then [HeadDimV] value
	headKV int         // HeadDim, the key part of each scratch buffer
}

// KVType names the cache element type: F32, F16 or Q8_0.
func (s *State) KVType() ggml.Type {
	if s.kv == nil {
		return ggml.F32
	}
	return s.kv.typ
}

// SetKVType stores the cache as t (F32, F16 or Q8_0) from now on. It must
// be called while the cache is empty; Q8_0 needs the key and value rows to
// be whole 32-element blocks.
func (s *State) SetKVType(t ggml.Type) error {
	if s.kvp != nil {
		return fmt.Errorf("model: a pool sequence's cache type is the pool's")
	}
	if s.pos != 0 {
		return fmt.Errorf("model: the KV cache type can only change while the cache is empty (%d tokens in it)", s.pos)
	}
	switch {
	case t == ggml.F32:
		s.kv = nil
		return nil
	case s.sq != nil:
		return fmt.Errorf("model: %s caches of encoder-decoder networks are not supported", t)
	}
	q, err := newKVQuant(s.m, t, s.nCtx)
	if err != nil {
		return err
	}
	s.kv, s.kCache, s.vCache = q, nil, nil
	return nil
}

// newKVQuant allocates an F16/Q8_0 cache of rows positions per layer.
func newKVQuant(m *Model, t ggml.Type, rows int) (*kvQuant, error) {
	c := m.Config
	switch {
	case t != ggml.F16 && t != ggml.Q8_0:
		return nil, fmt.Errorf("model: a KV cache of %s is not supported (F32, F16, Q8_0)", t)
	case c.kvDim()%t.BlockSize() != 0 || c.vDim()%t.BlockSize() != 0:
		return nil, fmt.Errorf("model: %s KV cache rows of %d and %d values are not whole %d-blocks", t, c.kvDim(), c.vDim(), t.BlockSize())
	}
	q := &kvQuant{typ: t, kRow: t.RowSize(c.kvDim()), vRow: t.RowSize(c.vDim()), headKV: c.HeadDim}
	for range c.NLayer {
		q.k = append(q.k, make([]byte, rows*q.kRow))
		q.v = append(q.v, make([]byte, rows*q.vRow))
	}
	for range m.pool.Size() {
		q.kv = append(q.kv, make([]float32, c.HeadDim+c.HeadDimV))
	}
	return q, nil
}

// storeKV appends the T new rows of k and v to layer l's cache at s.pos.
func (s *State) storeKV(l int, k, v []float32) {
	kd, vd := s.m.kvDim(), s.m.vDim()
	T := len(k) / kd
	if s.kv == nil {
		for j, hi := s.pos, s.pos+T; j < hi; {
			r, n := s.run(j, hi)
			t := j - s.pos
			copy(s.kCache[l][r*kd:(r+n)*kd], k[t*kd:(t+n)*kd])
			copy(s.vCache[l][r*vd:(r+n)*vd], v[t*vd:(t+n)*vd])
			j += n
		}
		return
	}
	q := s.kv
	for t := 0; t < T; t++ {
		r := s.row(s.pos + t)
		ggml.QuantizeActivation(q.typ, k[t*kd:(t+1)*kd], q.k[l][r*q.kRow:(r+1)*q.kRow])
		ggml.QuantizeActivation(q.typ, v[t*vd:(t+1)*vd], q.v[l][r*q.vRow:(r+1)*q.vRow])
	}
}

// key returns head kvh of the key at position j of layer l ([HeadDim]); a
// quantized cache decodes it into worker's scratch. (Small enough to inline
// on the float32 path, which is the attention's inner loop.)
func (s *State) key(l, j, kvh, worker int) []float32 {
	if s.kv != nil {
		return s.kv.key(s.m, l, s.row(j), kvh, worker)
	}
	hd := s.m.HeadDim
	o := (s.row(j)*s.m.NHeadKV + kvh) * hd
	return s.kCache[l][o : o+hd]
}

// value returns head kvh of the value at position j of layer l ([HeadDimV]).
func (s *State) value(l, j, kvh, worker int) []float32 {
	if s.kv != nil {
		return s.kv.value(s.m, l, s.row(j), kvh, worker)
	}
	hd := s.m.HeadDimV
	o := (s.row(j)*s.m.NHeadKV + kvh) * hd
	return s.vCache[l][o : o+hd]
}

// key and value take a storage row r (State.row of the position).
func (q *kvQuant) key(m *Model, l, r, kvh, worker int) []float32 {
	return q.decode(q.k[l], q.kRow, r, kvh*m.HeadDim, q.kv[worker][:m.HeadDim])
}

func (q *kvQuant) value(m *Model, l, r, kvh, worker int) []float32 {
	return q.decode(q.v[l], q.vRow, r, kvh*m.HeadDimV, q.kv[worker][q.headKV:q.headKV+m.HeadDimV])
}

// decode decodes len(dst) values from element off of row j of a layer's
// cache (rs bytes per row) into dst.
func (q *kvQuant) decode(rows []byte, rs, j, off int, dst []float32) []float32 {
	decodeSlice(q.typ, rows[j*rs:(j+1)*rs], off, dst)
	return dst
}

// decodeSlice decodes len(dst) values starting at element off of a row of
// type t (F16 or Q8_0, whose blocks of 32 are [fp16 d][32 × int8]).
func decodeSlice(t ggml.Type, row []byte, off int, dst []float32) {
	if t == ggml.F16 {
		row = row[2*off : 2*(off+len(dst))]
		for i := range dst {
			dst[i] = ggml.FP16ToFP32(uint16(row[2*i]) | uint16(row[2*i+1])<<8)
		}
		return
	}
	for i := range dst {
		e := off + i
		blk := row[34*(e/32):]
		d := ggml.FP16ToFP32(uint16(blk[0]) | uint16(blk[1])<<8)
		dst[i] = d * float32(int8(blk[2+e%32]))
	}
}

// KVBytes is the memory of the cache: keys and values of every layer.
func (s *State) KVBytes() int64 {
	if s.kv != nil {
		return int64(len(s.kv.k)) * int64(s.nCtx) * int64(s.kv.kRow+s.kv.vRow)
	}
	var n int64
	for l := range s.kCache {
		n += 4 * int64(len(s.kCache[l])+len(s.vCache[l]))
	}
	return n
}
