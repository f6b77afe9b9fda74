package main

import (
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/testing/reliability"
	"github.com/geocompact/geocompact/internal/testing/restcatalog"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// Environment variables naming a running REST catalog server, as
// scripts/start-rest.sh exports them.
const (
	envRESTURI        = "GEOCOMPACT_TEST_REST_URI"
	envRESTCredential = "GEOCOMPACT_TEST_REST_CREDENTIAL"
)

// restCatalogName is the catalog name the REST config files use.
const restCatalogName = "restlake"

// restServer returns the URI and client credential of a REST catalog
// server: the one GEOCOMPACT_TEST_REST_URI names when useEnv is set (as
// .ci/run starts it), else one started in this process with props for its
// object store.
func restServer(t *testing.T, useEnv bool, props map[string]string) (string, string) {
	t.Helper()
	if uri := os.Getenv(envRESTURI); uri != "" && useEnv {
		return uri, os.Getenv(envRESTCredential)
	}
	if testenv.InCI() && useEnv {
		t.Fatalf("%s is not set: the REST catalog server was not started (CI=true; run scripts/start-rest.sh, as .ci/run does)", envRESTURI)
	}
	var b [12]byte
	_, _ = crand.Read(b[:])
	cred := "geocompact:" + hex.EncodeToString(b[:])
	srv, err := restcatalog.NewServer(restcatalog.Options{
		Warehouse: t.TempDir(), StateDir: t.TempDir(), Props: props,
		Credentials: map[string]string{"geocompact": strings.TrimPrefix(cred, "geocompact:")},
	})
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		require.NoError(t, srv.Close())
	})
	return hs.URL, cred
}

// writeRESTConfig writes a config file with one REST catalog on warehouse
// wh, with props added to its properties, and returns its path.
func writeRESTConfig(t *testing.T, uri, cred, wh string, props map[string]string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "catalogs:\n  %s:\n    type: rest\n    warehouse: %q\n    properties:\n", restCatalogName, wh)
	fmt.Fprintf(&b, "      uri: %q\n      credential: %q\n", uri, cred)
	for k, v := range props {
		fmt.Fprintf(&b, "      %s: %q\n", k, v)
	}
	p := filepath.Join(t.TempDir(), "geocompact.yaml")
	writeFile(t, p, b.String())
	return p
}

// TestRESTCatalogEndToEnd runs generate, ingest, rewrite racing an
// appender, maintain, expire and orphans through a REST catalog config,
// on a local warehouse and on an s3:// one.
func TestRESTCatalogEndToEnd(t *testing.T) {
	t.Run("local", func(t *testing.T) {
		wh := t.TempDir()
		uri, cred := restServer(t, true, nil)
		testRESTCommands(t, writeRESTConfig(t, uri, cred, wh, nil), wh)
	})
	t.Run("s3", func(t *testing.T) {
		// A server from the environment was started with the S3 server
		// of the environment; a private S3 server needs a private REST one.
		sharedS3 := os.Getenv(reliability.EnvS3Endpoint) != ""
		s3 := reliability.UseS3(t)
		props := map[string]string{
			"s3.endpoint": s3.Endpoint, "s3.region": s3.Region, "s3.force-virtual-addressing": "false",
		}
		uri, cred := restServer(t, sharedS3, props)
		testRESTCommands(t, writeRESTConfig(t, uri, cred, s3.Warehouse(), props), s3.Warehouse())
	})
}

func testRESTCommands(t *testing.T, cfg, wh string) {
	const name = "rest.pings"
	cli := func(t *testing.T, args ...string) cliResult {
		t.Helper()
		r := runCLI(t, "", false, append([]string{"--config", cfg, "--catalog", restCatalogName}, args...)...)
		require.Equal(t, exitOK, r.Code, "%v: stdout %q stderr %q", args, r.Stdout, r.Stderr)
		return r
	}
	cli(t, "generate", "--table", name, "--rows", "3000", "--commits", "12", "--seed", "5")
	cat := openConfigCatalog(t, cfg, restCatalogName)
	tbl := loadTable(t, cat, name)
	require.True(t, strings.HasPrefix(tbl.Location(), strings.TrimSuffix(whURI(wh), "/")+"/"), "table at %s, warehouse %s", tbl.Location(), wh)
	want := digest(t, tbl)
	require.Equal(t, int64(3000), want.Rows)

	t.Run("ingest", func(t *testing.T) {
		in := filepath.Join(t.TempDir(), "points.parquet")
		validatetest.Write(t, in, validatetest.File{Rows: validatetest.Points(20), Geo: validatetest.Geo(""), Extra: true})
		cli(t, "ingest", "--table", "rest.ingested", "--create", in)
		require.Equal(t, int64(20), digest(t, loadTable(t, cat, "rest.ingested")).Rows)
	})

	t.Run("rewrite with a concurrent appender", func(t *testing.T) {
		acked := rewriteRacingAppends(t, cat, name, cfg)
		d := digest(t, loadTable(t, cat, name))
		for id := range acked {
			require.Equal(t, 1, d.IDs[id], "appended id %d", id)
		}
		require.Equal(t, want.Rows+int64(len(acked)), d.Rows)
		require.Empty(t, d.Duplicates())
		want = d
	})

	t.Run("maintain", func(t *testing.T) {
		cli(t, "maintain", "--table", name)
		checkIntact(t, loadTable(t, cat, name), want)
	})

	t.Run("expire", func(t *testing.T) {
		cli(t, "expire", "--table", name, "--older-than", "0s", "--retain-last", "1", "--force")
		tbl := loadTable(t, cat, name)
		require.Len(t, tbl.Metadata().Snapshots(), 1)
		checkIntact(t, tbl, want)
	})

	t.Run("orphans", func(t *testing.T) {
		tbl := loadTable(t, cat, name)
		writeObject(t, tbl.FS, tbl.Location()+"/data/planted-orphan.parquet", []byte("not referenced"))
		time.Sleep(1100 * time.Millisecond)
		r := cli(t, "orphans", "--table", name, "--older-than", "1s", "--dry-run", "--force")
		require.Contains(t, r.Stdout, "planted-orphan.parquet")
		cli(t, "orphans", "--table", name, "--older-than", "1s", "--force")
		un, err := reliability.Unreferenced(t.Context(), loadTable(t, cat, name))
		require.NoError(t, err)
		require.Empty(t, un)
		checkIntact(t, loadTable(t, cat, name), want)
	})
}

// whURI is wh as the catalog records it: a directory becomes file://.
func whURI(wh string) string {
	if strings.Contains(wh, "://") {
		return wh
	}
	return "file://" + wh
}

// rewriteRacingAppends runs `rewrite --curve hilbert` while another writer
// appends a few batches through cat, until a rewrite has committed with an
// append committed while it ran; a rewrite that lost every retry to the
// appender (exit 4) is run again. It returns the ids of the acknowledged
// appends.
func rewriteRacingAppends(t *testing.T, cat catalog.Catalog, name, cfg string) map[int64]bool {
	acked := map[int64]bool{}
	next := int64(900_000_000)
	for attempt := range 6 {
		var rewriting atomic.Bool
		rewriting.Store(true)
		during := 0
		var appendErr error
		var wg sync.WaitGroup
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(attempt), 3))
			for n := 0; n < 4 && rewriting.Load(); n++ {
				time.Sleep(time.Duration(n) * 40 * time.Millisecond)
				ids := make([]int64, appendBatchRows)
				for i := range ids {
					ids[i], next = next, next+1
				}
				if appendErr = appendIDs(t, cat, name, ids, rng); appendErr != nil {
					return
				}
				for _, id := range ids {
					acked[id] = true
				}
				if rewriting.Load() {
					during++
				}
			}
		})
		r := runCLI(t, "", false, "--config", cfg, "--catalog", restCatalogName,
			"rewrite", "--table", name, "--curve", "hilbert", "--option", "rewrite-all=true")
		rewriting.Store(false)
		wg.Wait()
		require.NoError(t, appendErr)
		require.Contains(t, []int{exitOK, exitConflict}, r.Code, "rewrite: stderr %q", r.Stderr)
		t.Logf("attempt %d: rewrite exit %d, %d appends committed while it ran", attempt, r.Code, during)
		if r.Code == exitOK && during > 0 {
			return acked
		}
	}
	t.Fatal("no rewrite committed while an append committed")
	return nil
}

// appendIDs appends one batch of points with the given ids through cat.
func appendIDs(t *testing.T, cat catalog.Catalog, name string, ids []int64, rng *rand.Rand) error {
	tbl, err := catalogs.LoadTable(t.Context(), cat, name)
	if err != nil {
		return err
	}
	rec := pointBatch(t, tbl, ids, rng)
	defer rec.Release()
	rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		return err
	}
	defer rdr.Release()
	_, err = tbl.Append(t.Context(), rdr, nil)
	return err
}
