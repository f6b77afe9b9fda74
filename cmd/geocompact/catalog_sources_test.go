package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// recordingServer is an HTTP server on 127.0.0.1 that answers 404 to
// everything and returns what it received: each request's line, headers
// and body.
func recordingServer(t *testing.T) (uri string, received func() string) {
	t.Helper()
	var mu sync.Mutex
	var b strings.Builder
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		b.WriteString(r.Method + " " + r.URL.String() + "\n")
		for k, v := range r.Header {
			b.WriteString(k + ": " + strings.Join(v, ",") + "\n")
		}
		b.Write(body)
		mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL, func() string {
		mu.Lock()
		defer mu.Unlock()
		return b.String()
	}
}

// TestCatalogMixedSourcesSendNothing: a PYICEBERG_CATALOG__*__URI over a
// .pyiceberg.yaml catalog with a credential is refused before any request,
// so the credential and warehouse never reach the variable's host.
func TestCatalogMixedSourcesSendNothing(t *testing.T) {
	const secret = "s3cr3t-client-9f2c"
	isolatePyIceberg(t)
	uri, received := recordingServer(t)
	writeFile(t, filepath.Join(os.Getenv("PYICEBERG_HOME"), ".pyiceberg.yaml"),
		"catalog:\n  default:\n    type: rest\n    uri: https://prod.invalid\n    credential: prod-id:"+secret+"\n    warehouse: prod-wh\n")
	t.Setenv("PYICEBERG_CATALOG__DEFAULT__URI", uri)
	r := runCLI(t, "", false, "--catalog", "default", "metrics", "--table", "gis.telemetry", "--json")
	require.NotEqual(t, exitOK, r.Code)
	require.Contains(t, r.Stderr, "credential")
	require.NotContains(t, r.Stderr, secret)
	require.Empty(t, received())
}

// TestCatalogFromEnvAlone: --catalog-from-env opens exactly the catalog of
// $GEOCOMPACT_CATALOG_PROPERTIES, even when ./geocompact.yaml and
// PyIceberg's configuration define a catalog of the same name.
func TestCatalogFromEnvAlone(t *testing.T) {
	isolatePyIceberg(t)
	dir := t.TempDir()
	prodDB, scratchDB := filepath.Join(dir, "prod.db"), filepath.Join(dir, "scratch.db")
	writeFile(t, "geocompact.yaml", "catalogs:\n  default:\n    type: sql\n    warehouse: "+whURI(filepath.Join(dir, "prodwh"))+
		"\n    properties:\n      uri: file:"+prodDB+"\n      sql.dialect: sqlite\n      sql.driver: sqlite\n")
	t.Setenv("PYICEBERG_CATALOG__DEFAULT__URI", "sqlite:///"+prodDB)
	doc, err := json.Marshal(map[string]any{"name": "default", "properties": map[string]string{
		"type": "sql", "uri": "sqlite:///" + scratchDB, "warehouse": whURI(filepath.Join(dir, "scratchwh"))}})
	require.NoError(t, err)
	t.Setenv(catalogPropertiesEnv, string(doc))
	r := runCLI(t, "", false, "--catalog-from-env", "generate", "--table", "gis.t", "--rows", "200", "--commits", "2", "--seed", "1")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	_, err = os.Stat(scratchDB)
	require.NoError(t, err)
	_, err = os.Stat(prodDB)
	require.ErrorIs(t, err, os.ErrNotExist)

	r = runCLI(t, "", false, "--catalog-from-env", "--catalog", "default", "metrics", "--table", "gis.t")
	require.Equal(t, exitUsage, r.Code, r.Stderr)
}
