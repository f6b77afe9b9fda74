package restcatalog_test

import (
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/testing/restcatalog"
)

var testSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
)

// newTable creates namespace ns and table ns.t through cat.
func newTable(t *testing.T, cat catalog.Catalog, ns string) *table.Table {
	t.Helper()
	require.NoError(t, cat.CreateNamespace(t.Context(), table.Identifier{ns}, nil))
	tbl, err := cat.CreateTable(t.Context(), table.Identifier{ns, "t"}, testSchema)
	require.NoError(t, err)
	return tbl
}

// rows builds an arrow table of n rows for testSchema starting at id from.
func rows(t *testing.T, tbl *table.Table, from, n int64) arrow.Table {
	t.Helper()
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.StringBuilder).Append("row")
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
}

// TestRacingAppends has two REST clients append to the same table from
// the same base: the second commit is answered 409. Without retries the
// client reports ErrCommitFailed; with commit.retry.num-retries set,
// iceberg-go refreshes, replays it, and both appends are in the table.
func TestRacingAppends(t *testing.T) {
	for _, retries := range []string{"0", "3"} {
		t.Run("retries="+retries, func(t *testing.T) {
			ts := newServer(t, restcatalog.Options{})
			a, b := ts.client(t), ts.client(t)
			ctx := t.Context()
			require.NoError(t, a.CreateNamespace(ctx, table.Identifier{"race"}, nil))
			ident := table.Identifier{"race", "t"}
			first, err := a.CreateTable(ctx, ident, testSchema,
				catalog.WithProperties(iceberg.Properties{table.CommitNumRetriesKey: retries}))
			require.NoError(t, err)
			// iceberg-go never replays a commit whose branch a peer
			// created, so main exists before the race.
			_, err = first.AppendTable(ctx, rows(t, first, 100, 1), 10, nil)
			require.NoError(t, err)
			ta, err := a.LoadTable(ctx, ident)
			require.NoError(t, err)
			tb, err := b.LoadTable(ctx, ident)
			require.NoError(t, err)

			_, err = ta.AppendTable(ctx, rows(t, ta, 0, 10), 10, nil)
			require.NoError(t, err)
			_, err = tb.AppendTable(ctx, rows(t, tb, 10, 5), 10, nil)
			assert.Equal(t, int64(1), ts.conflicts.Load(), "the stale append should have been answered 409 once")
			final, lerr := a.LoadTable(ctx, ident)
			require.NoError(t, lerr)
			if retries == "0" {
				require.ErrorIs(t, err, table.ErrCommitFailed)
				assert.Equal(t, "11", final.CurrentSnapshot().Summary.Properties["total-records"])
				return
			}
			require.NoError(t, err, "the stale append should be retried on a fresh base")
			require.Len(t, final.Metadata().Snapshots(), 3)
			assert.Equal(t, "16", final.CurrentSnapshot().Summary.Properties["total-records"])
		})
	}
}

// TestRacingCommitsOneWins sends two commits with the same stale-able
// requirement at once: exactly one wins, the other is ErrCommitFailed.
func TestRacingCommitsOneWins(t *testing.T) {
	ts := newServer(t, restcatalog.Options{})
	a, b := ts.client(t), ts.client(t)
	newTable(t, a, "race")
	ident := table.Identifier{"race", "t"}
	for round := range 10 {
		tbl, err := a.LoadTable(t.Context(), ident)
		require.NoError(t, err)
		schemaID := tbl.Schema().ID
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, cat := range []*rest.Catalog{a, b} {
			wg.Go(func() {
				next := iceberg.NewSchema(0, append(tbl.Schema().Fields(), iceberg.NestedField{
					ID: tbl.Metadata().LastColumnID() + 1, Name: "c" + string(rune('a'+i)) + string(rune('a'+round)), Type: iceberg.PrimitiveTypes.Int32,
				})...)
				_, _, errs[i] = cat.CommitTable(t.Context(), ident,
					[]table.Requirement{table.AssertCurrentSchemaID(schemaID), table.AssertLastAssignedFieldID(tbl.Metadata().LastColumnID())},
					[]table.Update{table.NewAddSchemaUpdate(next), table.NewSetCurrentSchemaUpdate(-1)})
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
				continue
			}
			require.ErrorIs(t, err, table.ErrCommitFailed)
			require.ErrorIs(t, err, rest.ErrCommitFailed)
		}
		require.Equal(t, 1, won, "round %d: errors %v", round, errs)
	}
}

// TestRequirements commits with each requirement stale: every one is 409
// and leaves the table as it was; with current values the commit goes in.
func TestRequirements(t *testing.T) {
	ts := newServer(t, restcatalog.Options{})
	cat := ts.client(t)
	tbl := newTable(t, cat, "req")
	_, err := tbl.AppendTable(t.Context(), rows(t, tbl, 0, 3), 10, nil)
	require.NoError(t, err)
	ident := tbl.Identifier()
	tbl, err = cat.LoadTable(t.Context(), ident)
	require.NoError(t, err)
	m := tbl.Metadata()
	snap := m.CurrentSnapshot().SnapshotID
	stale := snap + 1
	lastPart := *m.LastPartitionSpecID()
	set := func(v string) []table.Update {
		return []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"k": v})}
	}
	for _, tc := range []struct {
		name string
		req  table.Requirement
	}{
		{"assert-create", table.AssertCreate()},
		{"assert-table-uuid", table.AssertTableUUID(uuid.New())},
		{"assert-ref-snapshot-id", table.AssertRefSnapshotID("main", &stale)},
		{"assert-ref-snapshot-id absent", table.AssertRefSnapshotID("main", nil)},
		{"assert-last-assigned-field-id", table.AssertLastAssignedFieldID(m.LastColumnID() + 1)},
		{"assert-current-schema-id", table.AssertCurrentSchemaID(m.CurrentSchema().ID + 1)},
		{"assert-last-assigned-partition-id", table.AssertLastAssignedPartitionID(lastPart + 1)},
		{"assert-default-spec-id", table.AssertDefaultSpecID(m.DefaultPartitionSpec() + 1)},
		{"assert-default-sort-order-id", table.AssertDefaultSortOrderID(m.DefaultSortOrder() + 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := cat.CommitTable(t.Context(), ident, []table.Requirement{tc.req}, set(tc.name))
			require.ErrorIs(t, err, table.ErrCommitFailed)
			after, err := cat.LoadTable(t.Context(), ident)
			require.NoError(t, err)
			assert.Equal(t, tbl.MetadataLocation(), after.MetadataLocation(), "a refused commit changed the table")
		})
	}
	current := []table.Requirement{
		table.AssertTableUUID(m.TableUUID()), table.AssertRefSnapshotID("main", &snap),
		table.AssertLastAssignedFieldID(m.LastColumnID()), table.AssertCurrentSchemaID(m.CurrentSchema().ID),
		table.AssertLastAssignedPartitionID(lastPart), table.AssertDefaultSpecID(m.DefaultPartitionSpec()),
		table.AssertDefaultSortOrderID(m.DefaultSortOrder()),
	}
	meta, loc, err := cat.CommitTable(t.Context(), ident, current, set("ok"))
	require.NoError(t, err)
	assert.Equal(t, "ok", meta.Properties()["k"])
	assert.NotEqual(t, tbl.MetadataLocation(), loc)
}

// TestNotFound checks the 404s, through the client and on the wire.
func TestNotFound(t *testing.T) {
	ts := newServer(t, restcatalog.Options{})
	cat := ts.client(t)
	ctx := t.Context()
	newTable(t, cat, "there")

	_, err := cat.LoadTable(ctx, table.Identifier{"there", "missing"})
	require.ErrorIs(t, err, catalog.ErrNoSuchTable)
	require.ErrorIs(t, cat.DropTable(ctx, table.Identifier{"there", "missing"}), catalog.ErrNoSuchTable)
	require.ErrorIs(t, cat.DropNamespace(ctx, table.Identifier{"missing"}), catalog.ErrNoSuchNamespace)
	_, err = cat.LoadNamespaceProperties(ctx, table.Identifier{"missing"})
	require.ErrorIs(t, err, catalog.ErrNoSuchNamespace)
	for _, err := range cat.ListTables(ctx, table.Identifier{"missing"}) {
		require.ErrorIs(t, err, catalog.ErrNoSuchNamespace)
	}
	_, err = cat.RenameTable(ctx, table.Identifier{"there", "missing"}, table.Identifier{"there", "u"})
	require.ErrorIs(t, err, catalog.ErrNoSuchTable)
	_, _, err = cat.CommitTable(ctx, table.Identifier{"there", "missing"}, nil,
		[]table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"k": "v"})})
	require.ErrorIs(t, err, catalog.ErrNoSuchTable)
	_, err = cat.CreateTable(ctx, table.Identifier{"missing", "t"}, testSchema)
	require.ErrorIs(t, err, catalog.ErrNoSuchNamespace)

	tok := ts.token(t)
	code, body := ts.do(t, http.MethodGet, "/v1/namespaces/there/tables/missing", tok, "")
	require.Equal(t, http.StatusNotFound, code)
	requireError(t, body, 404, "NoSuchTableException")
	code, body = ts.do(t, http.MethodGet, "/v1/namespaces/missing", tok, "")
	require.Equal(t, http.StatusNotFound, code)
	requireError(t, body, 404, "NoSuchNamespaceException")
	code, body = ts.do(t, http.MethodPost, "/v1/namespaces/there/tables", tok, `{"name":"t","schema":`+schemaJSON(t)+`}`)
	require.Equal(t, http.StatusConflict, code)
	requireError(t, body, 409, "AlreadyExistsException")
}

func schemaJSON(t *testing.T) string {
	b, err := testSchema.MarshalJSON()
	require.NoError(t, err)
	return string(b)
}

// TestAuth checks that every route but the token endpoint needs a valid
// bearer token, and that a wrong secret gets no token.
func TestAuth(t *testing.T) {
	ts := newServer(t, restcatalog.Options{})
	for _, tok := range []string{"", "not-a-token"} {
		for _, path := range []string{"/v1/config", "/v1/namespaces", "/v1/namespaces/x/tables/y"} {
			code, body := ts.do(t, http.MethodGet, path, tok, "")
			require.Equal(t, http.StatusUnauthorized, code, "%s with token %q", path, tok)
			requireError(t, body, 401, "NotAuthorizedException")
		}
	}
	code, _ := ts.do(t, http.MethodGet, "/v1/config", ts.token(t), "")
	require.Equal(t, http.StatusOK, code)

	_, err := catalog.Load(t.Context(), "bad", iceberg.Properties{"type": "rest", "uri": ts.URL, "credential": clientID + ":wrong"})
	require.ErrorIs(t, err, rest.ErrOAuthError)
	_, err = catalog.Load(t.Context(), "none", iceberg.Properties{"type": "rest", "uri": ts.URL})
	require.ErrorIs(t, err, rest.ErrUnauthorized)
}

// TestTokenRefresh gives tokens a one-second life: an expired token is
// refused, and the client fetches new ones and keeps working.
func TestTokenRefresh(t *testing.T) {
	ts := newServer(t, restcatalog.Options{TokenTTL: time.Second})
	old := ts.token(t)
	cat := ts.client(t)
	require.NoError(t, cat.CreateNamespace(t.Context(), table.Identifier{"a"}, nil))
	before := ts.TokensIssued()
	time.Sleep(1100 * time.Millisecond)
	code, body := ts.do(t, http.MethodGet, "/v1/namespaces", old, "")
	require.Equal(t, http.StatusUnauthorized, code)
	require.Contains(t, body, "expired")
	ok, err := cat.CheckNamespaceExists(t.Context(), table.Identifier{"a"})
	require.NoError(t, err)
	require.True(t, ok)
	require.Greater(t, ts.TokensIssued(), before, "the client did not fetch a new token")
}

// TestPrefixRouting checks that a server with a prefix answers only under
// it, and that a client follows the prefix from the config.
func TestPrefixRouting(t *testing.T) {
	ts := newServer(t, restcatalog.Options{Prefix: "lake"})
	tok := ts.token(t)
	code, body := ts.do(t, http.MethodGet, "/v1/config", tok, "")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"prefix":"lake"`)
	require.Contains(t, body, `"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"`)

	cat := ts.client(t)
	require.NoError(t, cat.CreateNamespace(t.Context(), table.Identifier{"ns"}, nil))
	code, body = ts.do(t, http.MethodGet, "/v1/lake/namespaces", tok, "")
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"namespaces":[["ns"]]}`, body)
	code, body = ts.do(t, http.MethodGet, "/v1/namespaces", tok, "")
	require.Equal(t, http.StatusBadRequest, code)
	requireError(t, body, 400, "BadRequestException")
	code, _ = ts.do(t, http.MethodGet, "/v1/other/namespaces", tok, "")
	require.Equal(t, http.StatusBadRequest, code)
}

// TestOtherWarehouse has a client ask for a warehouse of its own: it gets a
// prefix and a catalog of its own, whose tables live in that warehouse.
func TestOtherWarehouse(t *testing.T) {
	ts := newServer(t, restcatalog.Options{})
	other := t.TempDir()
	cat := ts.client(t, "warehouse", other)
	tbl := newTable(t, cat, "elsewhere")
	require.True(t, strings.HasPrefix(tbl.Location(), "file://"+other+"/"), tbl.Location())
	exists, err := ts.client(t).CheckNamespaceExists(t.Context(), table.Identifier{"elsewhere"})
	require.NoError(t, err)
	require.False(t, exists, "the default warehouse sees the other warehouse's namespace")
}

// TestNestedNamespaces lists namespaces one level below a parent.
func TestNestedNamespaces(t *testing.T) {
	cat := newServer(t, restcatalog.Options{}).client(t)
	for _, ns := range []table.Identifier{{"a"}, {"a", "b"}, {"a", "b", "c"}, {"d"}} {
		require.NoError(t, cat.CreateNamespace(t.Context(), ns, nil))
	}
	top, err := cat.ListNamespaces(t.Context(), nil)
	require.NoError(t, err)
	assert.ElementsMatch(t, []table.Identifier{{"a"}, {"d"}}, top)
	under, err := cat.ListNamespaces(t.Context(), table.Identifier{"a"})
	require.NoError(t, err)
	assert.Equal(t, []table.Identifier{{"a", "b"}}, under)
	_, err = cat.ListNamespaces(t.Context(), table.Identifier{"zz"})
	require.ErrorIs(t, err, catalog.ErrNoSuchNamespace)
}

// TestTableLifecycle covers staged create, rename, register, drop and
// purge through the client.
func TestTableLifecycle(t *testing.T) {
	cat := newServer(t, restcatalog.Options{}).client(t)
	ctx := t.Context()
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"ns"}, nil))

	staged, err := cat.CreateTable(ctx, table.Identifier{"ns", "staged"}, testSchema,
		catalog.WithStagedUpdates(table.NewSetPropertiesUpdate(iceberg.Properties{"made": "staged"})))
	require.NoError(t, err)
	assert.Equal(t, "staged", staged.Properties()["made"])
	assert.NotEmpty(t, staged.MetadataLocation())

	renamed, err := cat.RenameTable(ctx, table.Identifier{"ns", "staged"}, table.Identifier{"ns", "renamed"})
	require.NoError(t, err)
	assert.Equal(t, staged.MetadataLocation(), renamed.MetadataLocation())
	ok, err := cat.CheckTableExists(ctx, table.Identifier{"ns", "staged"})
	require.NoError(t, err)
	require.False(t, ok)

	require.NoError(t, cat.DropTable(ctx, table.Identifier{"ns", "renamed"}))
	reg, err := cat.RegisterTable(ctx, table.Identifier{"ns", "registered"}, renamed.MetadataLocation())
	require.NoError(t, err)
	assert.Equal(t, renamed.MetadataLocation(), reg.MetadataLocation())
	assert.Equal(t, renamed.Metadata().TableUUID(), reg.Metadata().TableUUID())
	_, err = cat.RegisterTable(ctx, table.Identifier{"ns", "registered"}, renamed.MetadataLocation())
	require.ErrorIs(t, err, catalog.ErrTableAlreadyExists)

	meta := strings.TrimPrefix(reg.MetadataLocation(), "file://")
	require.FileExists(t, meta)
	require.NoError(t, cat.PurgeTable(ctx, table.Identifier{"ns", "registered"}))
	_, err = os.Stat(meta)
	require.ErrorIs(t, err, os.ErrNotExist, "purge left the metadata file")
	_, err = cat.LoadTable(ctx, table.Identifier{"ns", "registered"})
	require.ErrorIs(t, err, catalog.ErrNoSuchTable)
}
