package tokenizer

// queue is a binary heap popping the least element first; unlike
// container/heap it stores T unboxed, so pushes do not allocate per item.
type queue[T any] struct {
	items []T
	less  func(a, b *T) bool
}

func (q *queue[T]) len() int { return len(q.items) }

func (q *queue[T]) push(x T) {
	q.items = append(q.items, x)
	for i := len(q.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(&q.items[i], &q.items[p]) {
			break
		}
		q.items[i], q.items[p] = q.items[p], q.items[i]
		i = p
	}
}

func (q *queue[T]) pop() T {
	top := q.items[0]
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items = q.items[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < last && q.less(&q.items[l], &q.items[m]) {
			m = l
		}
		if r := l + 1; r < last && q.less(&q.items[r], &q.items[m]) {
			m = r
		}
		if m == i {
			return top
		}
		q.items[i], q.items[m] = q.items[m], q.items[i]
		i = m
	}
}
