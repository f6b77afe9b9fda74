package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
// rows into d, one file at a time. The digest does not depend on the
// rows' order, but a format's scan of several files may: iceberg-go's
// returns them in file order and decodes the next files while the first
// is read, holding their batches until their turn, so reading back 128 MiB
// files together held hundreds of MiB (docs/perf-history.md, "Memory at
// large target files"). One file per scan holds one file's batches in flight.
func (ex *execution) readBack(ctx context.Context, in []table.PlanFile, written []table.OutFile, geom int, bbox [4]int, d *verify.Digest) error {
	for i := range written {
		recs, err := ex.tf.ReadBack(ctx, in, written[i:i+1])
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
	}
	return nil
}
