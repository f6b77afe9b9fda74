package engine

import (
	"encoding/json"

	"github.com/geocompact/geocompact/table"
)

// resultJSON is Result without its methods, for encoding it.
type resultJSON Result

// deltaResultJSON is a Delta table's result as encoded: its commits are
// versions. HideCommitted and HideIDs are never set: a field of the outer
// struct wins over the embedded one of the same JSON name, and a nil one
// is omitted, so the snapshot names are left out.
type deltaResultJSON struct {
	resultJSON
	HideCommitted     *struct{} `json:"snapshots_committed,omitempty"`
	HideIDs           *struct{} `json:"snapshot_ids,omitempty"`
	VersionsCommitted int       `json:"versions_committed"`
	Versions          []int64   `json:"versions,omitempty"`
}

// MarshalJSON encodes the result. A Delta table's (Format table.FormatDelta)
// names its commits versions_committed and versions, where an Iceberg
// table's name them snapshots_committed and snapshot_ids.
func (r Result) MarshalJSON() ([]byte, error) {
	if r.Format != table.FormatDelta {
		return json.Marshal(resultJSON(r))
	}
	return json.Marshal(deltaResultJSON{resultJSON: resultJSON(r), VersionsCommitted: r.SnapshotsCommitted, Versions: r.SnapshotIDs})
}

// UnmarshalJSON decodes a result MarshalJSON encoded, of either format.
func (r *Result) UnmarshalJSON(b []byte) error {
	var plain resultJSON
	if err := json.Unmarshal(b, &plain); err != nil {
		return err
	}
	if plain.Format == table.FormatDelta {
		d := deltaResultJSON{resultJSON: plain}
		if err := json.Unmarshal(b, &d); err != nil {
			return err
		}
		plain = d.resultJSON
		plain.SnapshotsCommitted, plain.SnapshotIDs = d.VersionsCommitted, d.Versions
	}
	*r = Result(plain)
	return nil
}
