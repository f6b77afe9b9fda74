package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/internal/remedy"
	"github.com/geocompact/geocompact/table"
)

// ErrVerify marks a rewrite whose output differs from its input: the
// commit is abandoned and the written files are deleted.
var ErrVerify = errors.New("engine: verification failed")

// ErrInvalidData marks rows whose geometry fails validation: they are not
// rewritten, and nothing is committed.
var ErrInvalidData = errors.New("engine: invalid geometry")

// GeometryError is a group whose rows failed geometry validation: nothing
// was written or committed. It wraps ErrInvalidData.
type GeometryError struct {
	// Table is the table rewritten.
	Table string
	// Violations counts the violations, Codes lists their kinds.
	Violations int64
	Codes      []string
	// First describes the first violation ("; first at row …"), or "".
	First string
}

var _ remedy.Carrier = (*GeometryError)(nil)

func (e *GeometryError) Error() string { return e.Say(remedy.Library) }

// Facts says what was found: "3 geometry violations (wkb.ring); first at
// row …".
func (e *GeometryError) Facts() string {
	return fmt.Sprintf("%d geometry violations (%s)%s", e.Violations, strings.Join(e.Codes, ", "), e.First)
}

// Remedy is to validate the table, or to turn geometry validation off
// (RemedyValidate).
func (e *GeometryError) Remedy() remedy.Advice {
	return remedy.Advice{Kind: RemedyValidate, Table: e.Table, Name: OptValidateGeometry}
}

// Say returns the message with the remedy worded by w.
func (e *GeometryError) Say(w remedy.Wording) string {
	return fmt.Sprintf("%v: %s; nothing was written or committed: %s", ErrInvalidData, e.Facts(), w(e.Remedy()))
}

// Unwrap returns ErrInvalidData.
func (e *GeometryError) Unwrap() error { return ErrInvalidData }

// verify reads back the files a group wrote and compares their digest to
// the digest of the rows read.
func (ex *execution) verify(ctx context.Context, o *groupOut, geom int, bbox [4]int) error {
	if err := ex.readBack(ctx, o.files, o.newFiles, geom, bbox, &o.out); err != nil {
		return err
	}
	if d := o.in.Diff(o.out); d != "" {
		return fmt.Errorf("%w: %s; nothing was committed", ErrVerify, d)
	}
	return nil
}

// readBack reads the files written for the group of in and folds their
// rows into d, one file per scan. The digest does not depend on the
// rows' order, but a format's scan of several files may: iceberg-go's
// returns them in file order and decodes the next files while the first
// is read, holding their batches until their turn, so reading back 128 MiB
// files together held hundreds of MiB (docs/perf-history.md, "Memory at
// large target files"). One file per scan holds one file's batches in
// flight; up to ex.lanes scans run at once, each into a digest of its own,
// so a group given several cores reads back on all of them. After a
// failure no file is started, the others are cancelled, and the first
// error is returned.
func (ex *execution) readBack(ctx context.Context, in []table.PlanFile, written []table.OutFile, geom int, bbox [4]int, d *verify.Digest) error {
	lanes := min(max(ex.lanes, 1), len(written))
	if lanes <= 1 {
		for i := range written {
			if err := ex.readBackFile(ctx, in, written[i:i+1], geom, bbox, d); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		digests  = make([]verify.Digest, lanes)
	)
	for l := range digests {
		digests[l] = verify.NewDigest()
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(written) {
					return
				}
				if err := ex.readBackFile(ctx, in, written[i:i+1], geom, bbox, &digests[l]); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("verify: read back: %w", err)
	}
	for _, x := range digests {
		d.Merge(x)
	}
	return nil
}

// readBackFile reads the files of one scan and folds their rows into d.
func (ex *execution) readBackFile(ctx context.Context, in []table.PlanFile, written []table.OutFile, geom int, bbox [4]int, d *verify.Digest) error {
	recs, err := ex.tf.ReadBack(ctx, in, written)
	if err != nil {
		return fmt.Errorf("verify: read back: %w", err)
	}
	for rec, err := range recs {
		if err != nil {
			return fmt.Errorf("verify: read back: %w", err)
		}
		err = d.Add(rec, geom, bbox)
		rec.Release()
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
	}
	return nil
}
