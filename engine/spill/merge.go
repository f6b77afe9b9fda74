package spill

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/cluster"
)

// merger is a k-way merge of cursors by key, ties to the earlier cursor.
// It collects the rows it takes as positions in a list of the batches
// they come from, and gathers them into one batch every outRows rows.
type merger struct {
	schema  *arrow.Schema
	cs      []*cursor
	heap    []head // a binary min-heap of the cursors with rows, by (key, index)
	outRows int
	batches []arrow.RecordBatch // batches the pending rows come from
	base    []int32             // first row number of each batch in the list
	total   int32               // rows of the batches in the list
	rows    []int32             // pending rows, numbered across batches
	keys    []uint64            // their keys
}

// head is a cursor in the merge's heap, with the key of its next row
// held beside it, so that ordering the heap reads no cursor.
type head struct {
	key uint64
	ci  int
}

func (h head) less(o head) bool { return h.key < o.key || h.key == o.key && h.ci < o.ci }

func newMerger(sc *arrow.Schema, cs []*cursor, outRows int) *merger {
	m := &merger{schema: sc, cs: cs, outRows: max(outRows, 1)}
	for i, c := range cs {
		if c.rec != nil {
			m.heap = append(m.heap, head{c.keys[c.pos], i})
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m
}

func (m *merger) down(i int) {
	h := m.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && h[r].less(h[l]) {
			j = r
		}
		if !h[j].less(h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// run merges every row and hands emit each gathered batch with its keys.
func (m *merger) run(emit func(arrow.RecordBatch, []uint64) error) error {
	for len(m.heap) > 0 {
		ci := m.heap[0].ci
		c := m.cs[ci]
		// Take every row of c that sorts before the runner-up's next row.
		limit, tieOK := ^uint64(0), true
		if len(m.heap) > 1 {
			o := m.heap[1]
			if len(m.heap) > 2 && m.heap[2].less(o) {
				o = m.heap[2]
			}
			limit, tieOK = o.key, ci < o.ci
		}
		if c.slot < 0 {
			c.rec.Retain()
			c.slot = len(m.batches)
			m.batches = append(m.batches, c.rec)
			m.base = append(m.base, m.total)
			m.total += int32(c.rec.NumRows())
		}
		base := m.base[c.slot]
		for c.pos < len(c.keys) && len(m.rows) < m.outRows {
			k := c.keys[c.pos]
			if k > limit || k == limit && !tieOK {
				break
			}
			m.rows = append(m.rows, base+int32(c.pos))
			m.keys = append(m.keys, k)
			c.pos++
		}
		if c.pos == len(c.keys) {
			if err := c.next(); err != nil {
				return err
			}
			if c.rec == nil {
				last := len(m.heap) - 1
				m.heap[0] = m.heap[last]
				m.heap = m.heap[:last]
			}
		}
		if c.rec != nil {
			m.heap[0].key = c.keys[c.pos]
		}
		if len(m.heap) > 0 {
			m.down(0)
		}
		if len(m.rows) == m.outRows {
			if err := m.flush(emit); err != nil {
				return err
			}
		}
	}
	return m.flush(emit)
}

// flush gathers the pending rows into one batch for emit and lets go of
// the batches they came from.
func (m *merger) flush(emit func(arrow.RecordBatch, []uint64) error) error {
	if len(m.rows) == 0 {
		return nil
	}
	rec, err := cluster.Gather(m.schema, m.batches, m.rows, nil)
	if err == nil {
		err = emit(rec, m.keys)
		rec.Release()
	}
	m.release()
	m.rows, m.keys = m.rows[:0], m.keys[:0]
	return err
}

// release lets go of the batch list.
func (m *merger) release() {
	for _, b := range m.batches {
		b.Release()
	}
	m.batches, m.base, m.total = m.batches[:0], m.base[:0], 0
	for _, c := range m.cs {
		c.slot = -1
	}
}
