package procedure

import (
	"bytes"
	"encoding/json"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/sql"
)

// Result is what one statement returned: Spark's result columns under
// Spark's names and the rows, plus which call it was and the library's
// own result.
type Result struct {
	// Statement is the statement's 1-based index in the script; Line is
	// the line its CALL is on.
	Statement int `json:"statement"`
	Line      int `json:"line"`
	// Catalog is the catalog the call ran on, by name
	// (catalogs.EmbeddedName for the embedded one). Catalog, Procedure and
	// Table are empty for a Delta statement, which has a Location instead;
	// an ALTER TABLE of an Iceberg table has no Procedure.
	Catalog   string `json:"catalog,omitempty"`
	Procedure string `json:"procedure,omitempty"`
	Table     string `json:"table,omitempty"`
	// Command is the statement's command: CALL, VACUUM, OPTIMIZE or
	// ALTER TABLE.
	Command string `json:"command"`
	// Location is a Delta statement's table location.
	Location string `json:"location,omitempty"`
	DryRun   bool   `json:"dry_run"`
	// Columns are the procedure's result columns, as Spark names them.
	Columns []string `json:"columns"`
	// Rows hold one value per column: one row per call, except
	// remove_orphan_files, which has one row per orphan file as in Spark,
	// and VACUUM, whose dry run has one row per file it would delete and
	// whose real run has one row, the table's location, as in Delta.
	// On a dry run the counts are what a real run would rewrite or delete.
	Rows []Row `json:"rows"`
	// NoopReason says why nothing was rewritten, when nothing was.
	NoopReason string `json:"noop_reason,omitempty"`
	// Skipped says why the statement did not run (rewrite_manifests has no
	// dry run); it has no rows then.
	Skipped string `json:"skipped,omitempty"`
	// Ignored lists the arguments given that change nothing here, with why.
	Ignored []string `json:"ignored,omitempty"`
	// Detail is the library's result: *engine.Result,
	// *maintain.ExpireResult, *maintain.OrphansResult,
	// *maintain.ManifestsResult, *delta.VacuumResult or *alter.Result;
	// nil when skipped.
	Detail any `json:"detail,omitempty"`
}

// Row is one result row, its values in the order of Result.Columns: int64
// counts, or strings for orphan_file_location.
type Row struct {
	columns []string
	Values  []any
}

// MarshalJSON writes the row as an object keyed by column name, in column
// order.
func (r Row) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range r.columns {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(c)
		v, err := json.Marshal(r.Values[i])
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Spark's result columns of each procedure.
var columns = map[string][]string{
	sql.RewriteDataFiles: {"rewritten_data_files_count", "added_data_files_count", "rewritten_bytes_count",
		"failed_data_files_count", "removed_delete_files_count"},
	sql.ExpireSnapshots: {"deleted_data_files_count", "deleted_position_delete_files_count",
		"deleted_equality_delete_files_count", "deleted_manifest_files_count", "deleted_manifest_lists_count",
		"deleted_statistics_files_count"},
	sql.RemoveOrphanFiles: {"orphan_file_location"},
	sql.RewriteManifests:  {"rewritten_manifests_count", "added_manifests_count"},
	sql.RewritePositionDeleteFiles: {"rewritten_delete_files_count", "added_delete_files_count", "rewritten_bytes_count",
		"added_bytes_count"},
}

// Columns returns Spark's result columns of procedure (an sql
// procedure name).
func Columns(procedure string) []string { return columns[procedure] }

func (r *Result) add(values ...any) {
	r.Rows = append(r.Rows, Row{columns: r.Columns, Values: values})
}

func (r *Result) rewriteRows(res *engine.Result) {
	r.NoopReason = res.NoopReason
	if !res.DryRun || res.Plan == nil {
		r.add(int64(res.RewrittenDataFilesCount), int64(res.AddedDataFilesCount), res.RewrittenBytesCount,
			int64(res.FailedDataFilesCount), int64(res.RemovedDeleteFilesCount))
		return
	}
	var added int64
	for _, g := range res.Plan.Groups {
		added += int64(g.OutputFiles)
	}
	r.add(int64(res.Plan.Files()), added, res.Plan.Bytes(), int64(0), int64(0))
}

func (r *Result) expireRows(res *maintain.ExpireResult) {
	r.add(int64(res.DeletedDataFilesCount), int64(res.DeletedPositionDeleteFilesCount), int64(res.DeletedEqualityDeleteFilesCount),
		int64(res.DeletedManifestFilesCount), int64(res.DeletedManifestListsCount), int64(res.DeletedStatisticsFilesCount))
}

func (r *Result) orphanRows(res *maintain.OrphansResult) {
	r.Rows = []Row{}
	for _, f := range res.Files {
		r.add(f.Path)
	}
}

func (r *Result) manifestRows(res *maintain.ManifestsResult) {
	r.NoopReason = res.NoopReason
	r.add(int64(res.RewrittenManifestsCount), int64(res.AddedManifestsCount))
}
