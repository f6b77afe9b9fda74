package procedure

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/geocompact/geocompact/internal/suggest"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/config"
)

// Catalogs resolves the catalog part of a CALL: catalog.system.proc names
// one of the config file's catalogs, one of PyIceberg's (as --catalog
// does; the config file wins), or the embedded catalog by its own name
// (catalogs.EmbeddedName); system.proc runs on the current one.
type Catalogs struct {
	// Config holds the named catalogs; nil means none.
	Config *config.File
	// Current is the catalog system.proc runs on: a name from Config, or
	// "" for Config's default, else the embedded catalog.
	Current string
	// Warehouse is the embedded catalog's warehouse.
	Warehouse string
}

// Spec returns how to reach the catalog called name ("" for the current
// one). A name is matched exactly, then case-insensitively, as Spark's
// catalog names are usually written in lower case. An unknown name is an
// error that lists the known ones and the closest.
func (c Catalogs) Spec(name string) (catalogs.Spec, error) {
	cfg := c.Config
	if cfg == nil {
		cfg = &config.File{}
	}
	if name == "" {
		return cfg.Catalog(c.Current, c.Warehouse)
	}
	names := slices.Sorted(maps.Keys(cfg.Catalogs))
	if _, ok := cfg.Catalogs[name]; ok {
		return cfg.Catalog(name, c.Warehouse)
	}
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return cfg.Catalog(n, c.Warehouse)
		}
	}
	if strings.EqualFold(name, catalogs.EmbeddedName) {
		return catalogs.Spec{Warehouse: c.Warehouse, CommitRetries: cfg.CommitRetries}, nil
	}
	spec, err := cfg.Catalog(name, c.Warehouse) // PyIceberg's catalogs
	if !errors.Is(err, catalogs.ErrUnknown) {
		return spec, err
	}
	known := append([]string{catalogs.EmbeddedName}, names...)
	return catalogs.Spec{}, fmt.Errorf("%w: catalog %q is not configured (known catalogs: %s; CALL system.… runs on the current one)%s",
		ErrCall, name, strings.Join(known, ", "), suggest.Hint(name, known))
}

// Has reports whether name names a catalog Spec resolves: one of the
// config file's (matched as Spec matches it) or the embedded one. ALTER
// TABLE a.b.c runs on catalog a when Has(a), else on table b.c of
// namespace a in the current catalog, as Spark resolves a name.
func (c Catalogs) Has(name string) bool {
	if strings.EqualFold(name, catalogs.EmbeddedName) {
		return true
	}
	cfg := c.Config
	if cfg == nil {
		cfg = &config.File{}
	}
	for n := range cfg.Catalogs {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	_, err := cfg.Catalog(name, c.Warehouse) // PyIceberg's catalogs
	return err == nil
}

// specName is the name results report for spec's catalog.
func specName(spec catalogs.Spec) string {
	if spec.Name == "" {
		return catalogs.EmbeddedName
	}
	return spec.Name
}
