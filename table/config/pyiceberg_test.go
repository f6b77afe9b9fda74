package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/table/catalogs"
)

// pyIcebergEnv isolates a test from the machine's PyIceberg configuration:
// HOME, PYICEBERG_HOME and the working directory are empty directories,
// every PYICEBERG_CATALOG__* variable is cleared, and pyHome is returned
// to write a .pyiceberg.yaml into.
func pyIcebergEnv(t *testing.T) (pyHome string) {
	t.Helper()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(strings.ToUpper(k), "PYICEBERG_") {
			t.Setenv(k, "")
			require.NoError(t, os.Unsetenv(k))
		}
	}
	t.Setenv("HOME", t.TempDir())
	pyHome = t.TempDir()
	t.Setenv("PYICEBERG_HOME", pyHome)
	t.Chdir(t.TempDir())
	return pyHome
}

func writePyIceberg(t *testing.T, dir, doc string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, PyIcebergFile), []byte(doc), 0o600))
}

func TestPyIcebergCatalogs(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		env     map[string]string
		catalog string
		want    catalogs.Spec
	}{{
		name:    "sql sqlite file, absolute",
		yaml:    "catalog:\n  local:\n    type: sql\n    uri: sqlite:////data/pyiceberg/catalog.db\n    warehouse: file:///data/warehouse\n",
		catalog: "local",
		want: catalogs.Spec{Name: "local", Type: "sql", Warehouse: "file:///data/warehouse", Props: map[string]string{
			"uri": "file:/data/pyiceberg/catalog.db?_pragma=busy_timeout(10000)", "sql.dialect": "sqlite", "sql.driver": "sqlite"}},
	}, {
		name:    "sql postgresql with a driver, type inferred from the uri",
		yaml:    "catalog:\n  pg:\n    uri: postgresql+psycopg2://gis:pw@db.internal:5432/iceberg\n    warehouse: s3://lake/wh\n",
		catalog: "pg",
		want: catalogs.Spec{Name: "pg", Type: "sql", Warehouse: "s3://lake/wh", Props: map[string]string{
			"uri": "postgres://gis:pw@db.internal:5432/iceberg", "sql.dialect": "postgres", "sql.driver": "pgx"}},
	}, {
		name:    "rest with OAuth2: warehouse stays a property, keys pass through",
		yaml:    "catalog:\n  prod:\n    uri: https://rest.example/api\n    credential: id:secret\n    oauth2-server-uri: https://auth.example/token\n    scope: PRINCIPAL_ROLE:ALL\n    warehouse: analytics\n    s3:\n      endpoint: http://127.0.0.1:9000\n",
		catalog: "PROD",
		want: catalogs.Spec{Name: "PROD", Type: "rest", Props: map[string]string{
			"uri": "https://rest.example/api", "credential": "id:secret", "oauth2-server-uri": "https://auth.example/token",
			"scope": "PRINCIPAL_ROLE:ALL", "warehouse": "analytics", "s3.endpoint": "http://127.0.0.1:9000"}},
	}, {
		name:    "environment only, in PyIceberg's encoding",
		env:     map[string]string{"PYICEBERG_CATALOG__GIS_PROD__URI": "https://rest.example", "PYICEBERG_CATALOG__GIS_PROD__TOKEN": "t0ken", "PYICEBERG_CATALOG__GIS_PROD__S3__ACCESS_KEY_ID": "AK"},
		catalog: "gis-prod",
		want: catalogs.Spec{Name: "gis-prod", Type: "rest", Props: map[string]string{
			"uri": "https://rest.example", "token": "t0ken", "s3.access-key-id": "AK"}},
	}, {
		name:    "environment over the file, key by key",
		yaml:    "catalog:\n  prod:\n    type: rest\n    uri: https://old.example\n    prefix: p1\n",
		env:     map[string]string{"pyiceberg_catalog__prod__uri": "https://new.example"},
		catalog: "prod",
		want: catalogs.Spec{Name: "prod", Type: "rest", Props: map[string]string{
			"uri": "https://new.example", "prefix": "p1"}},
	}, {
		name:    "glue with client.* fallbacks",
		yaml:    "catalog:\n  aws:\n    type: glue\n    client.region: eu-west-1\n    glue.access-key-id: AK\n    client.access-key-id: ignored\n    warehouse: s3://b/wh\n",
		catalog: "aws",
		want: catalogs.Spec{Name: "aws", Type: "glue", Warehouse: "s3://b/wh", Props: map[string]string{
			"client.region": "eu-west-1", "glue.region": "eu-west-1", "glue.access-key-id": "AK", "client.access-key-id": "ignored"}},
	}, {
		name:    "hive inferred from thrift",
		yaml:    "catalog:\n  hms:\n    uri: thrift://hms:9083\n    warehouse: s3://b/wh\n",
		catalog: "hms",
		want:    catalogs.Spec{Name: "hms", Type: "hive", Warehouse: "s3://b/wh", Props: map[string]string{"uri": "thrift://hms:9083"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := pyIcebergEnv(t)
			if tc.yaml != "" {
				writePyIceberg(t, home, tc.yaml)
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			got, err := (&File{}).Catalog(tc.catalog, "./warehouse")
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestPyIcebergFileSearch: $PYICEBERG_HOME before the home directory
// before the working directory, as PyIceberg looks.
func TestPyIcebergFileSearch(t *testing.T) {
	pyHome := pyIcebergEnv(t)
	home, wd := os.Getenv("HOME"), t.TempDir()
	t.Chdir(wd)
	doc := func(uri string) string { return "catalog:\n  c:\n    type: rest\n    uri: " + uri + "\n" }
	writePyIceberg(t, wd, doc("https://wd"))
	uri := func() string {
		s, err := (&File{}).Catalog("c", "")
		require.NoError(t, err)
		return s.Props["uri"]
	}
	require.Equal(t, "https://wd", uri())
	writePyIceberg(t, home, doc("https://home"))
	require.Equal(t, "https://home", uri())
	writePyIceberg(t, pyHome, doc("https://pyhome"))
	require.Equal(t, "https://pyhome", uri())
}

// TestPyIcebergPrecedence: a name in geocompact's own config file wins
// over PyIceberg's; other names fall through to PyIceberg.
func TestPyIcebergPrecedence(t *testing.T) {
	home := pyIcebergEnv(t)
	writePyIceberg(t, home, "catalog:\n  prod:\n    type: rest\n    uri: https://pyiceberg.example\n  other:\n    type: rest\n    uri: https://other.example\n")
	t.Setenv("PYICEBERG_CATALOG__PROD__URI", "https://env.example")
	f, err := Parse([]byte("catalogs:\n  prod:\n    type: sql\n    properties:\n      uri: postgres://own/db\n      sql.dialect: postgres\n"), "geocompact.yaml")
	require.NoError(t, err)
	own, err := f.Catalog("prod", "")
	require.NoError(t, err)
	require.Equal(t, "sql", own.Type)
	require.Equal(t, "postgres://own/db", own.Props["uri"])
	py, err := f.Catalog("other", "")
	require.NoError(t, err)
	require.Equal(t, "rest", py.Type)
	require.Equal(t, "https://other.example", py.Props["uri"])

	_, err = f.Catalog("missing", "")
	require.ErrorIs(t, err, catalogs.ErrUnknown)
	require.ErrorContains(t, err, "geocompact.yaml")
	require.ErrorContains(t, err, PyIcebergFile)
	require.ErrorContains(t, err, "other, prod")
}

// TestPyIcebergRefused: catalogs geocompact cannot open are refused by
// name (the type, the database, the Python class), and no message holds a
// property's value.
func TestPyIcebergRefused(t *testing.T) {
	const secret = "s3cr3t-value-never-shown"
	tests := []struct {
		name, yaml, want string
	}{
		{"dynamodb", "catalog:\n  c:\n    type: dynamodb\n    dynamodb.secret-access-key: " + secret + "\n", `type "dynamodb"`},
		{"in-memory", "catalog:\n  c:\n    type: in-memory\n    token: " + secret + "\n", `type "in-memory"`},
		{"bigquery", "catalog:\n  c:\n    type: bigquery\n    gcp.credential: " + secret + "\n", `type "bigquery"`},
		{"python class", "catalog:\n  c:\n    py-catalog-impl: mypkg.MyCatalog\n    credential: " + secret + "\n", "py-catalog-impl"},
		{"mysql", "catalog:\n  c:\n    type: sql\n    uri: mysql+pymysql://u:" + secret + "@h/db\n", `database "mysql"`},
		{"sqlite in memory", "catalog:\n  c:\n    type: sql\n    uri: \"sqlite:///:memory:\"\n    password: " + secret + "\n", "in-memory SQLite"},
		{"no type", "catalog:\n  c:\n    uri: ftp://u:" + secret + "@h\n", "has no type"},
		{"broken yaml", "catalog:\n  c:\n    credential: " + secret + "\n   bad: [\n", "does not parse"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := pyIcebergEnv(t)
			writePyIceberg(t, home, tc.yaml)
			_, err := (&File{}).Catalog("c", "")
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrPyIceberg), "%v", err)
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), secret)
		})
	}
}

// TestPyIcebergMixedSources: a catalog whose endpoint (uri, type) comes
// from one source and whose credentials come from the other is refused by
// name, so a secret of the file's catalog is never sent to an endpoint a
// variable named, nor a variable's secret to the file's endpoint.
func TestPyIcebergMixedSources(t *testing.T) {
	const secret = "s3cr3t-value-never-shown"
	const file = "catalog:\n  default:\n    type: rest\n    uri: https://prod.example\n"
	tests := []struct {
		name    string
		yaml    string
		env     map[string]string
		wantErr []string // substrings of the error; none means accepted
	}{{
		name:    "variable uri, file credential",
		yaml:    file + "    credential: id:" + secret + "\n    warehouse: prod\n",
		env:     map[string]string{"PYICEBERG_CATALOG__DEFAULT__URI": "http://127.0.0.1:1"},
		wantErr: []string{`"default"`, "uri", "credential"},
	}, {
		name:    "variable uri, file token",
		yaml:    file + "    token: " + secret + "\n",
		env:     map[string]string{"PYICEBERG_CATALOG__DEFAULT__URI": "http://127.0.0.1:1"},
		wantErr: []string{"uri", "token"},
	}, {
		name:    "variable type, file s3 secret",
		yaml:    file + "    s3.secret-access-key: " + secret + "\n",
		env:     map[string]string{"PYICEBERG_CATALOG__DEFAULT__TYPE": "rest"},
		wantErr: []string{"type", "s3.secret-access-key"},
	}, {
		name:    "variable credential, file uri",
		yaml:    file,
		env:     map[string]string{"PYICEBERG_CATALOG__DEFAULT__CREDENTIAL": "id:" + secret},
		wantErr: []string{"uri", "credential"},
	}, {
		name: "variable type, uri and credential, file credential overridden",
		yaml: file + "    credential: id:old\n",
		env: map[string]string{"PYICEBERG_CATALOG__DEFAULT__TYPE": "rest", "PYICEBERG_CATALOG__DEFAULT__URI": "https://new.example",
			"PYICEBERG_CATALOG__DEFAULT__CREDENTIAL": "id:new"},
		wantErr: nil,
	}, {
		name:    "variable warehouse over a file catalog with credentials",
		yaml:    file + "    credential: id:" + secret + "\n",
		env:     map[string]string{"PYICEBERG_CATALOG__DEFAULT__WAREHOUSE": "scratch"},
		wantErr: nil,
	}, {
		name:    "variable uri over a file catalog without credentials",
		yaml:    file + "    prefix: p1\n",
		env:     map[string]string{"PYICEBERG_CATALOG__DEFAULT__URI": "https://new.example"},
		wantErr: nil,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := pyIcebergEnv(t)
			writePyIceberg(t, home, tc.yaml)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, err := (&File{}).Catalog("default", "")
			if tc.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrPyIceberg)
			for _, s := range tc.wantErr {
				require.ErrorContains(t, err, s)
			}
			require.NotContains(t, err.Error(), secret)
			require.NotContains(t, err.Error(), "127.0.0.1")
		})
	}
}

// TestPyIcebergEnvName: PYICEBERG_CATALOG__MY_CAT__* defines the catalog
// PyIceberg calls my-cat; --catalog my_cat finds it too, while a file's
// my_cat keeps its own name.
func TestPyIcebergEnvName(t *testing.T) {
	home := pyIcebergEnv(t)
	writePyIceberg(t, home, "catalog:\n  file_cat:\n    type: rest\n    uri: https://file.example\n  a.b:\n    type: rest\n    uri: https://dotted.example\n")
	t.Setenv("PYICEBERG_CATALOG__MY_CAT__URI", "https://env.example")
	for name, want := range map[string]string{
		"my_cat": "https://env.example", "my-cat": "https://env.example",
		"file_cat": "https://file.example", "a.b": "https://dotted.example",
	} {
		spec, err := (&File{}).Catalog(name, "")
		require.NoError(t, err, name)
		require.Equal(t, want, spec.Props["uri"], name)
		require.Equal(t, name, spec.Name)
	}
}

// TestStandalone: a catalog given as properties is used alone, whatever
// the PyIceberg file and variables say of the same name, and its name
// keeps its "_" and ".".
func TestStandalone(t *testing.T) {
	home := pyIcebergEnv(t)
	writePyIceberg(t, home, "catalog:\n  default:\n    type: rest\n    uri: https://prod.example\n    credential: id:prod-secret\n    warehouse: prod\n")
	t.Setenv("PYICEBERG_CATALOG__DEFAULT__TOKEN", "env-token")
	tests := []struct {
		name string
		doc  string
		want catalogs.Spec
	}{{
		name: "rest",
		doc:  `{"name": "default", "properties": {"type": "rest", "uri": "http://127.0.0.1:9"}}`,
		want: catalogs.Spec{Name: "default", Type: "rest", Props: map[string]string{"uri": "http://127.0.0.1:9"}},
	}, {
		name: "sql with a name holding _ and .",
		doc:  `{"name": "my_cat.b", "properties": {"uri": "sqlite:////tmp/c.db", "warehouse": "file:///tmp/wh", "s3.region": "x"}}`,
		want: catalogs.Spec{Name: "my_cat.b", Type: "sql", Warehouse: "file:///tmp/wh", Props: map[string]string{
			"uri": "file:/tmp/c.db?_pragma=busy_timeout(10000)", "sql.dialect": "sqlite", "sql.driver": "sqlite", "s3.region": "x"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Standalone([]byte(tc.doc), "GEOCOMPACT_CATALOG_PROPERTIES")
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	for _, bad := range []string{``, `[]`, `{"properties": {"type": "rest"}}`, `{"name": "c", "properties": {"type": "rest", "uri": 1}}`, `{"name": "c"}`} {
		_, err := Standalone([]byte(bad), "GEOCOMPACT_CATALOG_PROPERTIES")
		require.ErrorIs(t, err, ErrPyIceberg, bad)
		require.ErrorContains(t, err, "GEOCOMPACT_CATALOG_PROPERTIES", bad)
	}
}
