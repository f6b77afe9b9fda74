package restcatalog

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// restIdentifier is the spec's TableIdentifier.
type restIdentifier struct {
	Namespace table.Identifier `json:"namespace"`
	Name      string           `json:"name"`
}

func (i restIdentifier) ident() table.Identifier {
	return append(append(table.Identifier{}, i.Namespace...), i.Name)
}

// loadTableResult is the spec's LoadTableResult. MetadataLocation is empty
// for a staged table.
type loadTableResult struct {
	MetadataLocation string            `json:"metadata-location,omitempty"`
	Metadata         table.Metadata    `json:"metadata"`
	Config           map[string]string `json:"config"`
}

func tableResult(tbl *table.Table) loadTableResult {
	return loadTableResult{MetadataLocation: tbl.MetadataLocation(), Metadata: tbl.Metadata(), Config: map[string]string{}}
}

// listTables answers GET namespaces/{namespace}/tables.
func (s *Server) listTables(w http.ResponseWriter, r *http.Request, wh *warehouse, p params) error {
	ok, err := wh.cat.CheckNamespaceExists(r.Context(), p.ns)
	if err != nil {
		return err
	}
	if !ok {
		return catalog.ErrNoSuchNamespace
	}
	out := []restIdentifier{}
	for id, err := range wh.cat.ListTables(r.Context(), p.ns) {
		if err != nil {
			return err
		}
		out = append(out, restIdentifier{Namespace: catalog.NamespaceFromIdent(id), Name: catalog.TableNameFromIdent(id)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"identifiers": out})
	return nil
}

// createTableRequest is the spec's CreateTableRequest. The spec and the
// order refer to the request's schema, so they decode unbound.
type createTableRequest struct {
	Name        string                        `json:"name"`
	Schema      *iceberg.Schema               `json:"schema"`
	Location    string                        `json:"location"`
	Spec        *iceberg.UnboundPartitionSpec `json:"partition-spec"`
	WriteOrder  *table.UnboundSortOrder       `json:"write-order"`
	StageCreate bool                          `json:"stage-create"`
	Properties  iceberg.Properties            `json:"properties"`
}

func (c createTableRequest) spec() *iceberg.PartitionSpec {
	if c.Spec == nil {
		return nil
	}
	return &c.Spec.PartitionSpec
}

func (c createTableRequest) order() table.SortOrder {
	if c.WriteOrder == nil {
		return table.UnsortedSortOrder
	}
	return c.WriteOrder.SortOrder
}

// createTable answers POST namespaces/{namespace}/tables. A staged create
// only returns the metadata the table would have; the client creates it
// with a commit that asserts it does not exist yet.
func (s *Server) createTable(w http.ResponseWriter, r *http.Request, wh *warehouse, p params) error {
	var req createTableRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Name == "" || req.Schema == nil {
		return badRequest("create table: name and schema are required")
	}
	p.table = req.Name
	defer s.lock(wh, p.ident())()
	if req.StageCreate {
		return s.stageTable(w, r.Context(), wh, p, req)
	}
	opts := []catalog.CreateTableOpt{catalog.WithSortOrder(req.order()), catalog.WithProperties(req.Properties)}
	if req.Location != "" {
		opts = append(opts, catalog.WithLocation(req.Location))
	}
	if spec := req.spec(); spec != nil {
		opts = append(opts, catalog.WithPartitionSpec(spec))
	}
	tbl, err := wh.cat.CreateTable(r.Context(), p.ident(), req.Schema, opts...)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tableResult(tbl))
	return nil
}

// stageTable answers a staged create with fresh metadata, writing nothing.
func (s *Server) stageTable(w http.ResponseWriter, ctx context.Context, wh *warehouse, p params, req createTableRequest) error {
	if err := s.checkAbsent(ctx, wh, p.ident()); err != nil {
		return err
	}
	loc := strings.TrimSuffix(req.Location, "/")
	if loc == "" {
		props, err := wh.cat.LoadNamespaceProperties(ctx, p.ns)
		if err != nil {
			return err
		}
		if nsLoc := props.Get("location", ""); nsLoc != "" {
			loc, err = url.JoinPath(nsLoc, p.table)
		} else {
			loc, err = url.JoinPath(wh.uri, strings.Join(p.ns, ".")+".db", p.table)
		}
		if err != nil {
			return badRequest("table location: %v", err)
		}
	}
	meta, err := table.NewMetadata(req.Schema, req.spec(), req.order(), loc, req.Properties)
	if err != nil {
		return badRequest("stage table %s: %v", strings.Join(p.ident(), "."), err)
	}
	writeJSON(w, http.StatusOK, loadTableResult{Metadata: meta, Config: map[string]string{}})
	return nil
}

// checkAbsent returns ErrNoSuchNamespace when ident's namespace is missing
// and ErrTableAlreadyExists when the table exists.
func (s *Server) checkAbsent(ctx context.Context, wh *warehouse, ident table.Identifier) error {
	ok, err := wh.cat.CheckNamespaceExists(ctx, catalog.NamespaceFromIdent(ident))
	if err != nil {
		return err
	}
	if !ok {
		return catalog.ErrNoSuchNamespace
	}
	exists, err := wh.cat.CheckTableExists(ctx, ident)
	if err != nil {
		return err
	}
	if exists {
		return catalog.ErrTableAlreadyExists
	}
	return nil
}

// registerTable answers POST namespaces/{namespace}/register: the table is
// added to the catalog at the metadata file the client names, as it is.
// The SQL catalog has no register call, so the row is inserted directly.
func (s *Server) registerTable(w http.ResponseWriter, r *http.Request, wh *warehouse, p params) error {
	var req struct {
		Name             string `json:"name"`
		MetadataLocation string `json:"metadata-location"`
		Overwrite        bool   `json:"overwrite"`
	}
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Name == "" || req.MetadataLocation == "" {
		return badRequest("register table: name and metadata-location are required")
	}
	if req.Overwrite {
		return errUnsupported
	}
	for _, level := range p.ns {
		if strings.Contains(level, ".") {
			return badRequest("register table: namespace level %q has a dot, which this server cannot register under", level)
		}
	}
	p.table = req.Name
	ctx := r.Context()
	defer s.lock(wh, p.ident())()
	if err := s.checkAbsent(ctx, wh, p.ident()); err != nil {
		return err
	}
	loc := req.MetadataLocation
	if _, err := table.NewFromLocation(ctx, p.ident(), loc, iceio.LoadFSFunc(wh.props, loc), nil); err != nil {
		return badRequest("register table: read metadata %s: %v", loc, err)
	}
	_, err := wh.db.ExecContext(ctx, `INSERT INTO iceberg_tables
		(catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type)
		VALUES (?, ?, ?, ?, NULL, 'TABLE')`, catalogName, strings.Join(p.ns, "."), p.table, loc)
	if err != nil {
		return err
	}
	tbl, err := wh.cat.LoadTable(ctx, p.ident())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tableResult(tbl))
	return nil
}

// loadTable answers GET namespaces/{namespace}/tables/{table}.
func (s *Server) loadTable(w http.ResponseWriter, r *http.Request, wh *warehouse, p params) error {
	tbl, err := wh.cat.LoadTable(r.Context(), p.ident())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tableResult(tbl))
	return nil
}

// tableExists answers HEAD namespaces/{namespace}/tables/{table}: 204 or
// 404.
func (s *Server) tableExists(w http.ResponseWriter, r *http.Request, wh *warehouse, p params) error {
	ok, err := wh.cat.CheckTableExists(r.Context(), p.ident())
	if err != nil {
		return err
	}
	if !ok {
		return catalog.ErrNoSuchTable
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// dropTable answers DELETE namespaces/{namespace}/tables/{table}; with
// purgeRequested=true the table's files are deleted too.
func (s *Server) dropTable(w http.ResponseWriter, r *http.Request, wh *warehouse, p params) error {
	defer s.lock(wh, p.ident())()
	var err error
	if r.URL.Query().Get("purgeRequested") == "true" {
		err = wh.cat.PurgeTable(r.Context(), p.ident())
	} else {
		err = wh.cat.DropTable(r.Context(), p.ident())
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// renameTable answers POST tables/rename: 204, 404 for a missing source
// or destination namespace, 409 when the destination exists.
func (s *Server) renameTable(w http.ResponseWriter, r *http.Request, wh *warehouse, _ params) error {
	var req struct {
		Source      restIdentifier `json:"source"`
		Destination restIdentifier `json:"destination"`
	}
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Source.Name == "" || req.Destination.Name == "" {
		return badRequest("rename table: source and destination are required")
	}
	from, to := req.Source.ident(), req.Destination.ident()
	defer s.lock(wh, from, to)()
	if _, err := wh.cat.RenameTable(r.Context(), from, to); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
