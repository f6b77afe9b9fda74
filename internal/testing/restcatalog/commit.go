package restcatalog

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// commitRequest is the spec's CommitTableRequest.
type commitRequest struct {
	Identifier   *restIdentifier    `json:"identifier"`
	Requirements table.Requirements `json:"requirements"`
	Updates      table.Updates      `json:"updates"`
}

// commitTable answers POST namespaces/{namespace}/tables/{table}. Under
// the table's lock it checks every requirement against the current
// metadata (409 CommitFailedException when one fails), applies the
// updates to a copy (400 when they do not apply), and then has the SQL
// catalog write the new metadata and swap it in. A commit asserting that
// the table does not exist creates it (the second step of a staged create).
func (s *Server) commitTable(w http.ResponseWriter, r *http.Request, wh *warehouse, p params) error {
	var req commitRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	ident := p.ident()
	if req.Identifier != nil && strings.Join(req.Identifier.ident(), "\x00") != strings.Join(ident, "\x00") {
		return badRequest("commit: body names %s but the path names %s", strings.Join(req.Identifier.ident(), "."), strings.Join(ident, "."))
	}
	ctx := r.Context()
	defer s.lock(wh, ident)()

	var current table.Metadata
	tbl, err := wh.cat.LoadTable(ctx, ident)
	switch {
	case err == nil:
		current = tbl.Metadata()
	case errors.Is(err, catalog.ErrNoSuchTable) || errors.Is(err, catalog.ErrNoSuchNamespace):
		if !assertsCreate(req.Requirements) {
			return fmt.Errorf("%w: %s", catalog.ErrNoSuchTable, strings.Join(ident, "."))
		}
	default:
		return err
	}
	for _, req := range req.Requirements {
		if err := req.Validate(current); err != nil {
			return fmt.Errorf("%w: %s: %v", table.ErrCommitFailed, strings.Join(ident, "."), err)
		}
	}
	if err := checkUpdates(current, tbl, req.Updates); err != nil {
		return err
	}
	meta, loc, err := wh.cat.CommitTable(ctx, ident, req.Requirements, req.Updates)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"metadata-location": loc, "metadata": meta})
	return nil
}

// assertsCreate reports whether reqs include assert-create.
func assertsCreate(reqs table.Requirements) bool {
	for _, r := range reqs {
		if r.GetType() == "assert-create" {
			return true
		}
	}
	return false
}

// checkUpdates applies updates to a copy of the current metadata (or to
// the empty metadata of a table being created), so updates that cannot
// apply are a bad request rather than a server error.
func checkUpdates(current table.Metadata, tbl *table.Table, updates table.Updates) error {
	base, loc := current, ""
	if tbl != nil {
		loc = tbl.MetadataLocation()
	} else {
		var err error
		if base, err = table.NewMetadata(iceberg.NewSchema(0), nil, table.UnsortedSortOrder, "", nil); err != nil {
			return err
		}
	}
	if _, err := table.UpdateTableMetadata(base, updates, loc); err != nil {
		return badRequest("commit: updates do not apply: %v", err)
	}
	return nil
}
