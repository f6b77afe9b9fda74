package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/geocompact/geocompact/table/catalogs"
)

// PyIcebergFile is the name of PyIceberg's config file, looked for in
// $PYICEBERG_HOME, then the home directory, then the working directory.
const PyIcebergFile = ".pyiceberg.yaml"

// pyIcebergEnvPrefix starts the environment variables PyIceberg reads as
// catalog properties: PYICEBERG_CATALOG__<NAME>__<KEY>, where "__" in the
// key stands for "." and "_" for "-" (case-insensitive).
const pyIcebergEnvPrefix = "pyiceberg_catalog__"

// pyIcebergTypes are the PyIceberg catalog types geocompact opens, each
// with an iceberg-go implementation.
var pyIcebergTypes = []string{"sql", "rest", "glue", "hive"}

// ErrPyIceberg marks a PyIceberg catalog configuration geocompact cannot
// use. Its messages name catalogs, keys and types, never values.
var ErrPyIceberg = errors.New("config: PyIceberg catalog")

// pyIceberg is PyIceberg's catalog configuration: the catalogs of its
// config file with the environment's properties merged over them, as
// PyIceberg merges them. Names and keys are lower case.
type pyIceberg struct {
	path     string
	catalogs map[string]map[string]string
	// fromEnv holds, per catalog, the keys a PYICEBERG_CATALOG__*
	// variable set (the others come from the file).
	fromEnv map[string]map[string]bool
	// source, when set, names where the catalogs come from instead of
	// the file and the variables (a standalone catalog).
	source string
}

// loadPyIceberg reads PyIceberg's config file (the first that exists of
// $PYICEBERG_HOME, home and working directory) and the
// PYICEBERG_CATALOG__* variables of environ.
func loadPyIceberg(environ []string) (*pyIceberg, error) {
	p := &pyIceberg{catalogs: map[string]map[string]string{}, fromEnv: map[string]map[string]bool{}}
	var dirs []string
	for _, kv := range environ {
		if k, v, _ := strings.Cut(kv, "="); k == "PYICEBERG_HOME" && v != "" {
			dirs = append(dirs, v)
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, home)
	}
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, wd)
	}
	for _, d := range dirs {
		path := filepath.Join(d, PyIcebergFile)
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrPyIceberg, err)
		}
		if err := p.parse(b, path); err != nil {
			return nil, err
		}
		break
	}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, pyIcebergEnvPrefix) {
			continue
		}
		name, key, ok := strings.Cut(lk[len(pyIcebergEnvPrefix):], "__")
		if !ok || name == "" || key == "" {
			continue
		}
		name = strings.ReplaceAll(name, "_", "-")
		key = strings.ReplaceAll(strings.ReplaceAll(key, "__", "."), "_", "-")
		p.set(name, key, v)
		if p.fromEnv[name] == nil {
			p.fromEnv[name] = map[string]bool{}
		}
		p.fromEnv[name][key] = true
	}
	return p, nil
}

// parse reads the catalog section of a PyIceberg config document. Keys
// are lower-cased as PyIceberg does; nested maps are flattened with ".".
func (p *pyIceberg) parse(b []byte, path string) error {
	var doc map[string]any
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil && !errors.Is(err, errEOF()) {
		// yaml.v3 quotes the offending line, which may hold a secret:
		// name the file and the line only.
		return fmt.Errorf("%w: %s does not parse as YAML%s", ErrPyIceberg, path, yamlLine(err))
	}
	p.path = path
	for k, v := range doc {
		if strings.ToLower(k) != "catalog" {
			continue
		}
		cats, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: %s: catalog is not a mapping of catalog names", ErrPyIceberg, path)
		}
		for name, props := range cats {
			m, ok := props.(map[string]any)
			if !ok {
				return fmt.Errorf("%w: %s: catalog %q is not a mapping of properties", ErrPyIceberg, path, name)
			}
			flatten(m, "", func(key, value string) { p.set(strings.ToLower(name), key, value) })
		}
	}
	return nil
}

func flatten(m map[string]any, prefix string, set func(key, value string)) {
	for k, v := range m {
		key := prefix + strings.ToLower(k)
		switch v := v.(type) {
		case map[string]any:
			flatten(v, key+".", set)
		case nil:
		default:
			set(key, fmt.Sprint(v))
		}
	}
}

// yamlLine keeps only the line number of a YAML error.
func yamlLine(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return ""
	}
	s := err.Error()
	if i := strings.Index(s, "line "); i >= 0 {
		end := i + len("line ")
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
		return " (" + s[i:end] + ")"
	}
	return ""
}

func (p *pyIceberg) set(name, key, value string) {
	if p.catalogs[name] == nil {
		p.catalogs[name] = map[string]string{}
	}
	p.catalogs[name][key] = value
}

// names lists the configured catalogs, sorted.
func (p *pyIceberg) names() []string {
	var names []string
	for n := range p.catalogs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// where names the sources of the configuration, for messages.
func (p *pyIceberg) where() string {
	if p.source != "" {
		return p.source
	}
	if p.path != "" {
		return p.path + " and PYICEBERG_CATALOG__* variables"
	}
	return PyIcebergFile + " (none found) and PYICEBERG_CATALOG__* variables"
}

// spec turns the PyIceberg catalog called name into a catalogs.Spec for
// iceberg-go: ok is false when PyIceberg's configuration has no such
// catalog.
func (p *pyIceberg) spec(name string) (spec catalogs.Spec, ok bool, err error) {
	key := strings.ToLower(name)
	props, ok := p.catalogs[key]
	if !ok {
		// PyIceberg reads PYICEBERG_CATALOG__MY_CAT__* as catalog my-cat:
		// my_cat names it too.
		key = strings.ReplaceAll(key, "_", "-")
		if props, ok = p.catalogs[key]; !ok {
			return catalogs.Spec{}, false, nil
		}
	}
	if err := p.checkSources(name, key); err != nil {
		return catalogs.Spec{}, true, err
	}
	out := make(map[string]string, len(props))
	for k, v := range props {
		out[k] = v
	}
	typ, err := pyIcebergType(name, out, p.where())
	if err != nil {
		return catalogs.Spec{}, true, err
	}
	delete(out, "type")
	spec = catalogs.Spec{Name: name, Type: typ}
	switch typ {
	case "sql":
		if err := sqlProps(name, out); err != nil {
			return catalogs.Spec{}, true, err
		}
	case "glue":
		glueProps(out)
	}
	if typ != "rest" {
		// A REST catalog's warehouse is an identifier the server resolves,
		// not a path: it stays a property.
		spec.Warehouse = out["warehouse"]
		delete(out, "warehouse")
	}
	spec.Props = out
	return spec, true, nil
}

// pyIcebergType is the catalog's type: its type property, else the one
// PyIceberg infers from its uri. Types without an iceberg-go catalog are
// refused by name.
func pyIcebergType(name string, props map[string]string, where string) (string, error) {
	if props["py-catalog-impl"] != "" {
		return "", fmt.Errorf("%w %q (%s) names a Python catalog class (py-catalog-impl), which geocompact cannot load; it opens %s catalogs",
			ErrPyIceberg, name, where, strings.Join(pyIcebergTypes, ", "))
	}
	typ := strings.ToLower(props["type"])
	if typ == "" {
		scheme, _, _ := strings.Cut(props["uri"], "://")
		scheme = strings.ToLower(scheme)
		switch {
		case scheme == "http" || scheme == "https":
			typ = "rest"
		case scheme == "thrift":
			typ = "hive"
		case strings.HasPrefix(scheme, "sqlite") || strings.HasPrefix(scheme, "postgresql"):
			typ = "sql"
		default:
			return "", fmt.Errorf("%w %q (%s) has no type and its uri does not say one; set type to one of %s",
				ErrPyIceberg, name, where, strings.Join(pyIcebergTypes, ", "))
		}
	}
	if !slices.Contains(pyIcebergTypes, typ) {
		return "", fmt.Errorf("%w %q (%s) has type %q, which geocompact cannot open; it opens %s catalogs",
			ErrPyIceberg, name, where, typ, strings.Join(pyIcebergTypes, ", "))
	}
	return typ, nil
}

// sqlProps turns a SQLAlchemy URL (PyIceberg's SqlCatalog uri) into
// iceberg-go's: sqlite:///path becomes a SQLite file DSN, postgresql[+driver]://
// a pgx one. Other databases are refused by name.
func sqlProps(name string, props map[string]string) error {
	uri := props["uri"]
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return fmt.Errorf("%w %q: sql catalog uri is not a SQLAlchemy URL (sqlite:///PATH or postgresql://...)", ErrPyIceberg, name)
	}
	dialect, _, _ := strings.Cut(strings.ToLower(scheme), "+")
	switch dialect {
	case "sqlite":
		path := strings.TrimPrefix(rest, "/")
		if path == "" || path == ":memory:" {
			return fmt.Errorf("%w %q: an in-memory SQLite catalog lives in one process only; give it a file", ErrPyIceberg, name)
		}
		if q := strings.IndexByte(path, '?'); q >= 0 {
			path = path[:q]
		}
		props["uri"] = "file:" + path + "?_pragma=busy_timeout(10000)"
		props["sql.dialect"] = "sqlite"
		props["sql.driver"] = "sqlite"
	case "postgresql", "postgres":
		u, err := url.Parse("postgres://" + rest)
		if err != nil {
			return fmt.Errorf("%w %q: sql catalog uri is not a valid postgresql URL", ErrPyIceberg, name)
		}
		props["uri"] = u.String()
		props["sql.dialect"] = "postgres"
		props["sql.driver"] = "pgx"
	default:
		return fmt.Errorf("%w %q: sql catalog database %q is not supported; geocompact opens sqlite and postgresql",
			ErrPyIceberg, name, dialect)
	}
	return nil
}

// glueProps fills glue.* keys from PyIceberg's client.* fallbacks, which
// PyIceberg's Glue catalog also reads.
func glueProps(props map[string]string) {
	for _, k := range []string{"region", "access-key-id", "secret-access-key", "session-token"} {
		if v := props["client."+k]; v != "" && props["glue."+k] == "" {
			props["glue."+k] = v
		}
	}
}

// checkSources refuses a catalog whose endpoint (uri, type, an endpoint or
// server uri) and credentials come from different sources: the file and
// the PYICEBERG_CATALOG__* variables. Merged key by key, a variable's uri
// would otherwise carry the file's credential to another host, or a
// variable's token to the file's. The message names keys, never values.
func (p *pyIceberg) checkSources(name, key string) error {
	var endpoint, secret []string
	envEndpoint, fileEndpoint, envSecret, fileSecret := false, false, false, false
	for k := range p.catalogs[key] {
		env := p.fromEnv[key][k]
		if isEndpointKey(k) {
			endpoint = append(endpoint, k)
			envEndpoint, fileEndpoint = envEndpoint || env, fileEndpoint || !env
		}
		if isCredentialKey(k) {
			secret = append(secret, k)
			envSecret, fileSecret = envSecret || env, fileSecret || !env
		}
	}
	if len(secret) == 0 || (!envEndpoint && !envSecret) || (!fileEndpoint && !fileSecret) {
		return nil
	}
	slices.Sort(endpoint)
	slices.Sort(secret)
	return fmt.Errorf("%w %q mixes sources: %s and %s are set partly in %s and partly by PYICEBERG_CATALOG__* variables; "+
		"credentials are only sent to the endpoint defined with them, so define the catalog's endpoint and credentials in one place",
		ErrPyIceberg, name, strings.Join(endpoint, ", "), strings.Join(secret, ", "), p.fileName())
}

func (p *pyIceberg) fileName() string {
	if p.path != "" {
		return p.path
	}
	return PyIcebergFile
}

// isEndpointKey reports whether a property says where a catalog's
// requests go: its uri or type, or another server's address.
func isEndpointKey(k string) bool {
	return k == "uri" || k == "type" || k == "py-catalog-impl" || strings.HasSuffix(k, "-uri") || strings.HasSuffix(k, "endpoint")
}

// isCredentialKey reports whether a property holds a secret or an
// identity sent with requests (credential, token, keys, passwords,
// authorization headers). A sql uri may hold a password too; as an
// endpoint key it is never split from the rest.
func isCredentialKey(k string) bool {
	for _, w := range []string{"credential", "token", "secret", "password", "access-key", "api-key", "private-key", "authorization"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// standaloneDoc is how a catalog given as properties alone is passed:
// {"name": "lake", "properties": {"type": "rest", "uri": ...}}.
type standaloneDoc struct {
	Name       *string           `json:"name"`
	Properties map[string]string `json:"properties"`
}

// Standalone returns the spec of a catalog given as PyIceberg properties
// alone (a JSON document, see standaloneDoc), as the Python API passes a
// PyIceberg Catalog object or a dict: no config file, PyIceberg file or
// PYICEBERG_CATALOG__* variable is read, so the catalog opened is exactly
// the one given, and its name keeps any "_" or ".". source names the
// document in messages, which never quote a value.
func Standalone(b []byte, source string) (catalogs.Spec, error) {
	var doc standaloneDoc
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return catalogs.Spec{}, fmt.Errorf("%w: %s is not a JSON object {\"name\": ..., \"properties\": {...}} of strings", ErrPyIceberg, source)
	}
	if doc.Name == nil || *doc.Name == "" || doc.Properties == nil {
		return catalogs.Spec{}, fmt.Errorf("%w: %s needs a name and properties", ErrPyIceberg, source)
	}
	p := &pyIceberg{catalogs: map[string]map[string]string{}, fromEnv: map[string]map[string]bool{}, source: source}
	for k, v := range doc.Properties {
		p.set(strings.ToLower(*doc.Name), strings.ToLower(k), v)
	}
	spec, _, err := p.spec(*doc.Name)
	return spec, err
}
