package device

import (
	"fmt"
)

// Copies between host and device and between devices (issue 15's pinned,
// overlapped boundary copies; issue 16's peer copies). On a GPU:
//
//   - Write copies the bytes into a pinned staging buffer and queues an
//     async host-to-device copy from it on the device's stream; it
//     returns at once (the host goes on while the copy runs). An event
//     recorded after the copy guards the buffer: the next Write waits
//     for it before reusing it.
//   - Read queues an async device-to-host copy into pinned staging,
//     waits for the stream and copies the bytes out.
//   - Transfer from another device of the same backend: the source's
//     stream records "ready" after the work that made the bytes; the
//     destination's stream waits for it and copies peer to peer (where
//     both devices allow peer access, enabled once per pair), or else the
//     source's stream copies into the destination's pinned staging and
//     the destination's stream, after waiting for that, copies from it.
//     The destination records "moved" and the source's stream waits for
//     it before anything it queues later can overwrite the bytes or the
//     staging. The host waits for none of it.
//
// Other devices (the CPU stand-in; devices of two backends) go through
// the host: Read, then Write.

// Transfer copies src on device from into dst on device to (equal
// lengths), by to's own means where it has them (Peer), else through
// stage, a host buffer of at least src.Bytes() bytes.
func Transfer(to Device, dst Mem, from Device, src Mem, stage []byte) error {
	if dst.n != src.n {
		panic(fmt.Sprintf("device: transfer of %d bytes into %d", src.n, dst.n))
	}
	if p, ok := to.(Peer); ok {
		if done, err := p.CopyFrom(from, dst, src); done || err != nil {
			return err
		}
	}
	if err := from.Read(stage[:src.n], src); err != nil {
		return err
	}
	return to.Write(dst, stage[:src.n])
}

// Peer is a device that copies from some other devices itself (a GPU,
// from GPUs of its backend): done is false when it cannot copy from
// this one.
type Peer interface {
	CopyFrom(from Device, dst, src Mem) (done bool, err error)
}

// PeerAccess reports whether a transfer from the device from to d goes
// peer to peer (false: through pinned host memory, or the host); for
// tests and the planner's reasons.
func PeerAccess(to, from Device) bool {
	p, ok := to.(interface{ peerAccess(Device) bool })
	return ok && p.peerAccess(from)
}

// openCopies makes the events (inside Do).
func (d *gpu[P, S, E, C]) openCopies() (err error) {
	for _, e := range []**E{&d.wrote, &d.ready, &d.moved} {
		if *e, err = d.ctx.NewEvent(false); err != nil {
			return err
		}
	}
	d.peers = map[C]bool{}
	return nil
}

// closeCopies frees the staging and the events (inside Do).
func (d *gpu[P, S, E, C]) closeCopies() {
	d.ctx.SyncStream(d.s)
	for _, b := range [][]byte{d.wstage, d.rstage, d.xstage} {
		if b != nil {
			d.ctx.FreePinned(b)
		}
	}
	d.wstage, d.rstage, d.xstage = nil, nil, nil
	for _, e := range []*E{d.wrote, d.ready, d.moved} {
		if e != nil {
			d.ctx.DestroyEvent(e)
		}
	}
}

// pinned returns *buf grown to n bytes (inside Do). A buffer in use by
// queued copies is freed only after the stream is done with it.
func (d *gpu[P, S, E, C]) pinned(buf *[]byte, n int) ([]byte, error) {
	if len(*buf) >= n {
		return (*buf)[:n], nil
	}
	if *buf != nil {
		if err := d.ctx.SyncStream(d.s); err != nil {
			return nil, err
		}
		d.ctx.FreePinned(*buf)
		*buf = nil
	}
	b, err := d.ctx.AllocPinned(max(n, 64<<10))
	if err != nil {
		return nil, err
	}
	*buf = b
	return b[:n], nil
}

func (d *gpu[P, S, E, C]) Write(dst Mem, src []byte) error {
	return d.ctx.Do(func() error {
		if dst.n == 0 {
			return nil
		}
		if err := d.ctx.SyncEvent(d.wrote); err != nil { // the staging's last copy is done
			return err
		}
		st, err := d.pinned(&d.wstage, dst.n)
		if err != nil {
			return err
		}
		copy(st, src[:dst.n])
		if err := d.ctx.CopyToDevice(d.s, at[P](dst), st); err != nil {
			return err
		}
		return d.ctx.Record(d.wrote, d.s)
	})
}

func (d *gpu[P, S, E, C]) Read(dst []byte, src Mem) error {
	return d.ctx.Do(func() error {
		if src.n == 0 {
			return nil
		}
		st, err := d.pinned(&d.rstage, src.n)
		if err != nil {
			return err
		}
		if err := d.ctx.CopyToHost(d.s, st, at[P](src)); err != nil {
			return err
		}
		if err := d.ctx.SyncStream(d.s); err != nil {
			return err
		}
		copy(dst[:src.n], st)
		return nil
	})
}

// peerAccess says whether d reads from's memory directly, enabling the
// access the first time it is possible.
func (d *gpu[P, S, E, C]) peerAccess(from Device) bool {
	f, ok := from.(*gpu[P, S, E, C])
	if !ok || f == d {
		return false
	}
	can, known := d.peers[f.self]
	if known {
		return can
	}
	d.ctx.Do(func() error {
		var err error
		if can, err = d.ctx.CanAccessPeer(f.self); err == nil && can {
			can = d.ctx.EnablePeerAccess(f.self) == nil
		}
		return nil
	})
	d.peers[f.self] = can
	return can
}

// CopyFrom copies src on from (a device of d's backend) into dst on d,
// peer to peer or through d's pinned staging, ordered by events on the
// two streams (see above); done is false for any other device.
func (d *gpu[P, S, E, C]) CopyFrom(from Device, dst, src Mem) (bool, error) {
	f, ok := from.(*gpu[P, S, E, C])
	if !ok || f == d || dst.n != src.n {
		return false, nil
	}
	if src.n == 0 {
		return true, nil
	}
	peer := d.peerAccess(f)
	var st []byte
	err := f.ctx.Do(func() error {
		if !peer {
			var err error
			if st, err = d.pinnedFor(src.n); err != nil {
				return err
			}
			if err := f.ctx.CopyToHost(f.s, st, at[P](src)); err != nil {
				return err
			}
		}
		return f.ctx.Record(f.ready, f.s)
	})
	if err == nil {
		err = d.ctx.Do(func() error {
			if err := d.ctx.WaitEvent(d.s, f.ready); err != nil {
				return err
			}
			var err error
			if peer {
				err = d.ctx.CopyPeer(d.s, at[P](dst), f.self, at[P](src), src.n)
			} else {
				err = d.ctx.CopyToDevice(d.s, at[P](dst), st)
			}
			if err != nil {
				return err
			}
			return d.ctx.Record(d.moved, d.s)
		})
	}
	if err == nil {
		err = f.ctx.Do(func() error { return f.ctx.WaitEvent(f.s, d.moved) })
	}
	if err != nil {
		return true, fmt.Errorf("copying %d bytes from %s to %s: %w", src.n, f.Name(), d.Name(), err)
	}
	return true, nil
}

// pinnedFor is d's staging for copies from other devices, n bytes: the
// previous copy through it is done (d's stream, which did its last
// step, is synchronized before the buffer grows; it is reused only after
// the "moved" event of the copy before, which the source waited for).
func (d *gpu[P, S, E, C]) pinnedFor(n int) ([]byte, error) {
	var st []byte
	err := d.ctx.Do(func() error {
		if err := d.ctx.SyncEvent(d.moved); err != nil {
			return err
		}
		var err error
		st, err = d.pinned(&d.xstage, n)
		return err
	})
	return st, err
}
