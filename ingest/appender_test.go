package ingest_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/ingest"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/deltatable"
	"github.com/geocompact/geocompact/table/icebergtable"
	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// appenders gives, for each format, a fresh table's Appender maker: each
// call is a new Appender of the same table, as each ingest opens its own.
func appenders(t *testing.T) map[string]func() format.Appender {
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	require.NoError(t, err)
	loc := filepath.Join(t.TempDir(), "lake")
	return map[string]func() format.Appender{
		"iceberg": func() format.Appender { return icebergtable.Appender(cat, "gis.same") },
		"delta":   func() format.Appender { return deltatable.Appender(loc) },
	}
}

// TestAppendersKeepOneContract runs the same ingests into a table of each
// format: what the formats share (create, skip what was ingested, refuse
// a bad batch whole) must come out the same whichever writes the table.
func TestAppendersKeepOneContract(t *testing.T) {
	for name, open := range appenders(t) {
		t.Run(name, func(t *testing.T) {
			cfg := func(create bool, files ...string) ingest.Config {
				return ingest.Config{Files: files, Create: create, Checks: validate.DefaultConfig()}
			}
			a, b := pointsFile(t, 3), pointsFile(t, 4)
			_, err := ingest.Run(t.Context(), open(), cfg(false, a))
			require.ErrorIs(t, err, ingest.ErrNoTable, "no table and no create")

			first, err := ingest.Run(t.Context(), open(), cfg(true, a))
			require.NoError(t, err)
			assert.True(t, first.Created && first.Committed)
			assert.Equal(t, 1, first.Files)
			assert.EqualValues(t, 3, first.Rows)

			second, err := ingest.Run(t.Context(), open(), cfg(false, a, b))
			require.NoError(t, err)
			assert.False(t, second.Created)
			assert.EqualValues(t, 4, second.Rows, "only the new file")
			require.Len(t, second.Skipped, 1)
			assert.Equal(t, a, second.Skipped[0].Path)
			require.NotNil(t, second.Skipped[0].Commit)
			assert.Equal(t, first.Commit, *second.Skipped[0].Commit, "skipped as the first ingest's")

			again, err := ingest.Run(t.Context(), open(), cfg(false, b, b))
			require.NoError(t, err)
			assert.False(t, again.Committed, "nothing left to commit")
			assert.Equal(t, second.Commit, again.Commit, "the table's latest commit")
			require.Len(t, again.Skipped, 2)
			assert.Nil(t, again.Skipped[0].Commit, "the batch's own duplicate")
			assert.Equal(t, b, again.Skipped[0].Previous)

			bad := filepath.Join(t.TempDir(), "bad.parquet")
			validatetest.Write(t, bad, validatetest.File{Rows: []validatetest.Row{{WKB: []byte{1, 2, 3}}}, Geo: validatetest.Geo(""), Extra: true})
			_, err = ingest.Run(t.Context(), open(), cfg(false, pointsFile(t, 2), bad))
			_, refused := errors.AsType[*ingest.RefusedError](err)
			require.True(t, refused, "err = %v", err)
			after, err := ingest.Run(t.Context(), open(), cfg(false, b))
			require.NoError(t, err)
			assert.Equal(t, second.Commit, after.Commit, "the refused batch committed nothing")
		})
	}
}

// createdMeanwhile is an Appender whose Appends report, times times, that
// another writer made the table, as a create that lost its race does.
type createdMeanwhile struct {
	format.Appender
	times, loads int
}

func (c *createdMeanwhile) Load(ctx context.Context, spec format.AppendSpec) (format.Loaded, error) {
	c.loads++
	return c.Appender.Load(ctx, spec)
}

func (c *createdMeanwhile) Append(ctx context.Context, req format.AppendRequest) (*format.Appended, error) {
	if c.times > 0 {
		c.times--
		return nil, format.ErrCreatedMeanwhile
	}
	return c.Appender.Append(ctx, req)
}

// TestRunJoinsATableCreatedMeanwhile: an ingest whose create lost to
// another writer loads the table again and appends to it, with the checks
// of any table that exists; it tries that once, never in a loop.
func TestRunJoinsATableCreatedMeanwhile(t *testing.T) {
	loc := filepath.Join(t.TempDir(), "lake")
	cfg := ingest.Config{Files: []string{pointsFile(t, 3)}, Create: true, Checks: validate.DefaultConfig()}
	once := &createdMeanwhile{Appender: deltatable.Appender(loc), times: 1}
	res, err := ingest.Run(t.Context(), once, cfg)
	require.NoError(t, err)
	assert.Equal(t, 2, once.loads, "loaded again after the lost create")
	assert.EqualValues(t, 3, res.Rows)

	cfg.Files = []string{pointsFile(t, 2)}
	always := &createdMeanwhile{Appender: deltatable.Appender(filepath.Join(t.TempDir(), "other")), times: 5}
	_, err = ingest.Run(t.Context(), always, cfg)
	require.ErrorIs(t, err, format.ErrCreatedMeanwhile)
	assert.Equal(t, 2, always.loads, "one more try, not a loop")
}
