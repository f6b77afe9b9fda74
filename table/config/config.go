// Package config reads geocompact's config file: named catalogs, the
// default catalog and commit retry budgets, with ${NAME} references to
// the environment in property values. It turns a catalog's entry into
// the catalogs.Spec that catalogs.Open opens.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"io"

	"gopkg.in/yaml.v3"

	"github.com/geocompact/geocompact/table/catalogs"
)

// File is the geocompact config file: named catalogs and defaults.
//
//	commit-retries: 4            # default for every catalog
//	catalogs:
//	  lake:
//	    type: sql                # sql, rest, glue, hive or hadoop
//	    warehouse: s3://bucket/warehouse
//	    properties:              # passed to the catalog as they are
//	      uri: postgres://gis@127.0.0.1:5432/iceberg
//	      sql.dialect: postgres
//	      s3.endpoint: http://127.0.0.1:7070
//	      s3.secret-access-key: ${LAKE_S3_SECRET}   # expanded from the environment
//
// Property values may reference environment variables as ${NAME}, so
// secrets stay out of the file and out of shell history.
type File struct {
	// CommitRetries is the default retry budget for commits that lose a
	// race with another writer (default 4).
	CommitRetries int `yaml:"commit-retries"`
	// DefaultCatalog is used when --catalog is not given; empty means the
	// embedded SQLite catalog.
	DefaultCatalog string `yaml:"default-catalog"`
	// Catalogs are the named catalogs --catalog chooses from.
	Catalogs map[string]Entry `yaml:"catalogs"`

	path string
}

// Entry is one named catalog in the config file.
type Entry struct {
	Type          string            `yaml:"type"`
	Warehouse     string            `yaml:"warehouse"`
	CommitRetries int               `yaml:"commit-retries"`
	Properties    map[string]string `yaml:"properties"`
}

// ErrInvalid marks a config file that cannot be used.
var ErrInvalid = errors.New("config: bad config")

var catalogTypes = []string{"sql", "rest", "glue", "hive", "hadoop"}

// SearchPath lists where Load looks when no path is given, in
// order.
func SearchPath() []string {
	paths := []string{"geocompact.yaml"}
	if home, err := os.UserHomeDir(); err == nil {
		paths = append(paths, filepath.Join(home, ".config", "geocompact", "config.yaml"))
	}
	return paths
}

// Load reads the config file at path, or the first that exists on
// SearchPath when path is empty. No file is not an error: the result
// is the empty config (the embedded catalog only). An explicit path that
// does not exist is.
func Load(path string) (*File, error) {
	candidates := []string{path}
	if path == "" {
		candidates = SearchPath()
	}
	for _, p := range candidates {
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) && path == "" {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		return Parse(b, p)
	}
	return &File{}, nil
}

// Parse parses a config document; name is used in error messages.
// Unknown fields and unknown catalog types are errors.
func Parse(b []byte, name string) (*File, error) {
	var c File
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, errEOF()) {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, name, err)
	}
	for n, cc := range c.Catalogs {
		ok := false
		for _, t := range catalogTypes {
			ok = ok || strings.EqualFold(cc.Type, t)
		}
		if !ok {
			return nil, fmt.Errorf("%w: %s: catalog %q has type %q, want one of %s", ErrInvalid, name, n, cc.Type, strings.Join(catalogTypes, ", "))
		}
	}
	c.path = name
	return &c, nil
}

func errEOF() error { return io.EOF }

// Catalog returns the spec of the catalog called name, or of the embedded
// catalog in warehouse when name (and the file's default) is empty. A
// name the config file does not hold is looked up in PyIceberg's catalog
// configuration (~/.pyiceberg.yaml and PYICEBERG_CATALOG__* variables), so
// the config file wins when both name a catalog.
func (c *File) Catalog(name, warehouse string) (catalogs.Spec, error) {
	if name == "" {
		name = c.DefaultCatalog
	}
	if name == "" {
		return catalogs.Spec{Warehouse: warehouse, CommitRetries: c.CommitRetries}, nil
	}
	cc, ok := c.Catalogs[name]
	if !ok {
		return c.pyIcebergCatalog(name)
	}
	props := make(map[string]string, len(cc.Properties))
	for k, v := range cc.Properties {
		props[k] = os.ExpandEnv(v)
	}
	retries := cc.CommitRetries
	if retries == 0 {
		retries = c.CommitRetries
	}
	return catalogs.Spec{Name: name, Type: strings.ToLower(cc.Type), Warehouse: os.ExpandEnv(cc.Warehouse), Props: props, CommitRetries: retries}, nil
}

// pyIcebergCatalog returns the spec of PyIceberg's catalog called name, or
// an ErrUnknown error that says where it was looked for.
func (c *File) pyIcebergCatalog(name string) (catalogs.Spec, error) {
	py, err := loadPyIceberg(os.Environ())
	if err != nil {
		return catalogs.Spec{}, err
	}
	spec, ok, err := py.spec(name)
	if err != nil {
		return catalogs.Spec{}, err
	}
	if ok {
		spec.CommitRetries = c.CommitRetries
		return spec, nil
	}
	where := "no geocompact config file was found"
	if c.path != "" {
		where = "it is not in " + c.path
	}
	where += " nor in PyIceberg's " + py.where()
	if names := py.names(); len(names) > 0 {
		where += " (PyIceberg catalogs: " + strings.Join(names, ", ") + ")"
	}
	return catalogs.Spec{}, fmt.Errorf("%w %q: %s", catalogs.ErrUnknown, name, where)
}
