package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// isolatePyIceberg points HOME, PYICEBERG_HOME and the working directory
// at empty directories and clears PYICEBERG_* variables, so a test reads
// only the PyIceberg configuration it writes.
func isolatePyIceberg(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(strings.ToUpper(k), "PYICEBERG_") {
			t.Setenv(k, "")
			require.NoError(t, os.Unsetenv(k))
		}
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("PYICEBERG_HOME", t.TempDir())
	t.Chdir(t.TempDir())
}

// TestPyIcebergCatalogName: --catalog NAME reaches a REST catalog that only
// PyIceberg's environment variables configure, with its OAuth2 client
// credential, for generate, rewrite and metrics.
func TestPyIcebergCatalogName(t *testing.T) {
	isolatePyIceberg(t)
	wh := t.TempDir()
	uri, cred := restServer(t, false, nil)
	t.Setenv("PYICEBERG_CATALOG__PROD__URI", uri)
	t.Setenv("PYICEBERG_CATALOG__PROD__CREDENTIAL", cred)
	t.Setenv("PYICEBERG_CATALOG__PROD__WAREHOUSE", whURI(wh))
	for _, args := range [][]string{
		{"generate", "--table", "gis.telemetry", "--rows", "2000", "--commits", "6", "--seed", "3"},
		{"rewrite", "--table", "gis.telemetry", "--curve", "hilbert", "--option", "min-input-files=2", "--json"},
	} {
		r := runCLI(t, "", false, append([]string{"--catalog", "prod"}, args...)...)
		require.Equal(t, exitOK, r.Code, "%v: stderr %q", args, r.Stderr)
	}
	r := runCLI(t, "", false, "--catalog", "prod", "metrics", "--table", "gis.telemetry", "--json")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	require.Contains(t, r.Stdout, `"total_records": 2000`)
	tbl := loadTable(t, openConfigCatalog(t, writeRESTConfig(t, uri, cred, wh, nil), restCatalogName), "gis.telemetry")
	require.True(t, strings.HasPrefix(tbl.Location(), strings.TrimSuffix(whURI(wh), "/")), tbl.Location())
}

// TestPyIcebergSecretsNeverShown: a catalog that fails to open with a
// credential, a token or a database password says which catalog failed,
// at debug log level, with none of the secrets on stdout or stderr.
func TestPyIcebergSecretsNeverShown(t *testing.T) {
	const (
		credSecret  = "cred-s3cr3t-9f2c"
		tokenSecret = "tok-s3cr3t-77ab"
		pwSecret    = "pw-s3cr3t-41d0"
		s3Secret    = "s3-s3cr3t-5e11"
	)
	uri, _ := restServer(t, false, nil)
	closed := closedPort(t)
	tests := []struct {
		name string
		env  map[string]string
		yaml string
	}{
		{"rest wrong credential", map[string]string{
			"PYICEBERG_CATALOG__PROD__URI": uri, "PYICEBERG_CATALOG__PROD__CREDENTIAL": "geocompact:" + credSecret,
			"PYICEBERG_CATALOG__PROD__S3__SECRET_ACCESS_KEY": s3Secret,
		}, ""},
		{"rest token, server down", map[string]string{
			"PYICEBERG_CATALOG__PROD__URI": "http://" + closed, "PYICEBERG_CATALOG__PROD__TOKEN": tokenSecret,
		}, ""},
		{"rest credential in the yaml, server down", nil,
			"catalog:\n  prod:\n    uri: http://" + closed + "\n    credential: client:" + credSecret + "\n"},
		{"sql password, database down", map[string]string{
			"PYICEBERG_CATALOG__PROD__URI": "postgresql+psycopg2://gis:" + pwSecret + "@" + closed + "/iceberg",
		}, ""},
		{"unknown type", map[string]string{
			"PYICEBERG_CATALOG__PROD__TYPE": "dynamodb", "PYICEBERG_CATALOG__PROD__DYNAMODB__SECRET_ACCESS_KEY": s3Secret,
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			isolatePyIceberg(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if tc.yaml != "" {
				require.NoError(t, os.WriteFile(filepath.Join(os.Getenv("PYICEBERG_HOME"), ".pyiceberg.yaml"), []byte(tc.yaml), 0o600))
			}
			for _, args := range [][]string{
				{"metrics", "--table", "gis.telemetry", "--json"},
				{"rewrite", "--table", "gis.telemetry", "--curve", "hilbert", "--dry-run"},
			} {
				r := runCLI(t, "", false, append([]string{"--catalog", "prod", "--log-level", "debug"}, args...)...)
				require.NotEqual(t, exitOK, r.Code)
				require.Contains(t, r.Stderr, `"prod"`)
				for _, s := range []string{credSecret, tokenSecret, pwSecret, s3Secret} {
					require.NotContains(t, r.Stdout+r.Stderr, s)
				}
			}
		})
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestSQLCallOnPyIcebergCatalog: CALL lake.system.proc(...) reaches a
// catalog that only PyIceberg's configuration names, as --catalog lake
// does, and ALTER TABLE lake.ns.t resolves lake as that catalog.
func TestSQLCallOnPyIcebergCatalog(t *testing.T) {
	isolatePyIceberg(t)
	wh := t.TempDir()
	uri, cred := restServer(t, false, nil)
	t.Setenv("PYICEBERG_CATALOG__LAKE__URI", uri)
	t.Setenv("PYICEBERG_CATALOG__LAKE__CREDENTIAL", cred)
	t.Setenv("PYICEBERG_CATALOG__LAKE__WAREHOUSE", whURI(wh))
	r := runCLI(t, "", false, "--catalog", "lake", "generate", "--table", "gis.pings", "--rows", "1200", "--commits", "4", "--seed", "5")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	r = runCLI(t, "", false, "sql", "CALL lake.system.rewrite_data_files(table => 'gis.pings', options => map('min-input-files', '2'))")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	require.Contains(t, r.Stdout, "rewritten_data_files_count")
	r = runCLI(t, "", false, "sql", "ALTER TABLE lake.gis.pings SET TBLPROPERTIES ('write.target-file-size-bytes' = '1048576')")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	r = runCLI(t, "", false, "--catalog", "lake", "metrics", "--table", "gis.pings", "--json")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	require.Contains(t, r.Stdout, `"total_records": 1200`)
	tbl := loadTable(t, openConfigCatalog(t, writeRESTConfig(t, uri, cred, wh, nil), restCatalogName), "gis.pings")
	require.Equal(t, "1048576", tbl.Properties()["write.target-file-size-bytes"])
	require.Equal(t, "replace", string(tbl.CurrentSnapshot().Summary.Operation))
}
