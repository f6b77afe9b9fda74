package delta

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// SetFileMetadata sets a key-value pair of the data file's Parquet footer
// (such as GeoParquet's "geo"); call it before Close.
func (w *FileWriter) SetFileMetadata(key, value string) error {
	if err := w.pw.AppendKeyValueMetadata(key, value); err != nil {
		return fmt.Errorf("write %s: footer metadata %q: %w", w.name, key, err)
	}
	return nil
}

// nullPartitionDir is the directory name of a null partition value, as
// Hive-style layouts write it.
const nullPartitionDir = "__HIVE_DEFAULT_PARTITION__"

// FormatPartitionValue serialises row i of arr, a partition column in the
// Arrow type reads produce (Snapshot.ArrowSchema), as the protocol's
// partition value: nil for null, decimal digits for numbers, "true" or
// "false", yyyy-mm-dd for dates, and timestamps with microseconds (UTC with
// a Z for timestamp, without a zone for timestamp_ntz). Empty strings read
// back as null, as Delta defines them.
func FormatPartitionValue(arr arrow.Array, i int) (*string, error) {
	if arr.IsNull(i) {
		return nil, nil
	}
	var s string
	switch a := arr.(type) {
	case *array.String:
		s = a.Value(i)
	case *array.Boolean:
		s = strconv.FormatBool(a.Value(i))
	case *array.Int8:
		s = strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int16:
		s = strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int32:
		s = strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int64:
		s = strconv.FormatInt(a.Value(i), 10)
	case *array.Float32:
		s = strconv.FormatFloat(float64(a.Value(i)), 'g', -1, 32)
	case *array.Float64:
		s = strconv.FormatFloat(a.Value(i), 'g', -1, 64)
	case *array.Date32:
		s = a.Value(i).ToTime().UTC().Format("2006-01-02")
	case *array.Timestamp:
		tt := a.DataType().(*arrow.TimestampType)
		ts := a.Value(i).ToTime(tt.Unit).UTC()
		if tt.TimeZone == "" {
			s = ts.Format("2006-01-02 15:04:05.000000")
		} else {
			s = ts.Format("2006-01-02T15:04:05.000000Z")
		}
	case *array.Decimal128:
		s = a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)
	default:
		return nil, fmt.Errorf("partition value of type %s cannot be written", arr.DataType())
	}
	return &s, nil
}

// PartitionDir is the Hive-style directory of a data file with these
// partition values: "col=value/..." in the order of cols (physical names),
// values path-escaped, null as __HIVE_DEFAULT_PARTITION__; "" when cols is
// empty.
func PartitionDir(cols []string, values map[string]*string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		v := nullPartitionDir
		if p := values[c]; p != nil && *p != "" {
			v = url.PathEscape(*p)
		}
		parts[i] = url.PathEscape(c) + "=" + v
	}
	return strings.Join(parts, "/")
}

// PhysicalPartitionColumns returns the snapshot's partition columns by
// physical name, the keys of add actions' partition values.
func (s *Snapshot) PhysicalPartitionColumns() []string {
	mode := s.ColumnMapping()
	out := make([]string, len(s.Metadata.PartitionColumns))
	for i, c := range s.Metadata.PartitionColumns {
		out[i] = c
		if f := s.Schema.Field(c); f != nil {
			out[i] = f.PhysicalName(mode)
		}
	}
	return out
}

// NewTxn returns a txn action recording that appID reached version.
func NewTxn(appID string, version int64, now time.Time) Action {
	ts := now.UnixMilli()
	return Action{Txn: &Txn{AppID: appID, Version: version, LastUpdated: &ts}}
}

// CheckAppend returns a *ConflictError when data files written for a table
// with metadata planned can no longer be appended to cur, the latest
// snapshot: its schema, partition columns or column mapping changed. It
// also checks that cur can be written at all (CheckWrite).
func CheckAppend(planned *Metadata, cur *Snapshot) error {
	if err := CheckWrite(cur.Protocol, cur.Metadata); err != nil {
		return err
	}
	md := cur.Metadata
	switch {
	case md.SchemaString != planned.SchemaString:
		return &ConflictError{Version: cur.Version, Reason: "the table schema changed"}
	case !slices.Equal(md.PartitionColumns, planned.PartitionColumns):
		return &ConflictError{Version: cur.Version, Reason: "the partition columns changed"}
	case md.Configuration["delta.columnMapping.mode"] != planned.Configuration["delta.columnMapping.mode"]:
		return &ConflictError{Version: cur.Version, Reason: "the column mapping mode changed"}
	}
	return nil
}

// CommitAppend commits actions as the version after read, or as version 0
// when read is nil (the actions then create the table). When another
// writer commits that version first, appends do not conflict: it loads the
// latest snapshot and calls retry with it, which returns the actions to
// commit on top of it instead (nil to commit nothing, when the work turns
// out to be done already) or an error to stop. It makes at most
// maxAttempts attempts and returns the version committed, or -1 when retry
// returned no actions.
func CommitAppend(ctx context.Context, t *Table, read *Snapshot, actions []Action, maxAttempts int,
	retry func(cur *Snapshot) ([]Action, error)) (int64, error) {
	v := int64(0)
	if read != nil {
		v = read.Version + 1
	}
	for attempt := 1; ; attempt++ {
		err := Commit(ctx, t, v, actions)
		var ve *VersionExistsError
		if !errors.As(err, &ve) {
			return v, err
		}
		if attempt >= max(maxAttempts, 1) {
			return -1, fmt.Errorf("commit append: gave up after %d attempts: %w", attempt, err)
		}
		cur, err := t.Snapshot(ctx)
		if err != nil {
			return -1, fmt.Errorf("commit append: reload after losing version %d: %w", v, err)
		}
		if actions, err = retry(cur); err != nil || actions == nil {
			return -1, err
		}
		v = cur.Version + 1
	}
}
