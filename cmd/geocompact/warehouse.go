package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/table/catalogs"
)

// locationWarner is the embedded catalog with a check on every table it
// loads: a table whose location lies outside --warehouse is warned about
// once, on stderr. The catalog records absolute locations, so a copied or
// moved warehouse still reads and deletes the files of the original.
type locationWarner struct {
	catalog.Catalog
	warehouse string // absolute local directory
	warn      func(msg string)

	mu   sync.Mutex
	seen map[string]bool
}

// warnOutsideWarehouse wraps cat when spec is the embedded catalog; other
// catalogs hold tables wherever their owners put them.
func warnOutsideWarehouse(cat catalog.Catalog, spec catalogs.Spec, errOut io.Writer) catalog.Catalog {
	if spec.Type != "" {
		return cat
	}
	wh := spec.Warehouse
	if wh == "" {
		wh = catalogs.DefaultWarehouse
	}
	if u, err := url.Parse(wh); err == nil && u.Scheme == "file" {
		wh = u.Path
	}
	abs, err := filepath.Abs(wh)
	if err != nil {
		return cat
	}
	return &locationWarner{Catalog: cat, warehouse: abs, seen: map[string]bool{},
		warn: func(msg string) { fmt.Fprintf(errOut, "geocompact: warning: %s\n", msg) }}
}

// LoadTable implements catalog.Catalog.
func (c *locationWarner) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	t, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return t, err
	}
	name := strings.Join(ident, ".")
	if !insideDir(t.Location(), c.warehouse) {
		c.mu.Lock()
		first := !c.seen[name]
		c.seen[name] = true
		c.mu.Unlock()
		if first {
			c.warn(fmt.Sprintf("table %s lives at %s, outside the warehouse %s: this command reads, writes and deletes files there "+
				"(a copied warehouse still points at the original; see \"Moving a warehouse\" in docs/reliability.md)", name, t.Location(), c.warehouse))
		}
	}
	return t, nil
}

// Close releases what the wrapped catalog holds.
func (c *locationWarner) Close() error {
	if cl, ok := c.Catalog.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// insideDir reports whether loc, a location URI or path, is a local path
// below dir, compared as written and with symbolic links resolved (so a
// warehouse named through a link is not reported).
func insideDir(loc, dir string) bool {
	p := loc
	if strings.HasPrefix(loc, "file:") && !strings.HasPrefix(loc, "file://") {
		p = strings.TrimPrefix(loc, "file:") // Hadoop's file:/path, as Spark writes it
	} else if strings.Contains(loc, "://") {
		u, err := url.Parse(loc)
		if err != nil || u.Scheme != "file" {
			return false
		}
		p = u.Path
	}
	p = filepath.Clean(p)
	if under(p, dir) {
		return true
	}
	rp, err1 := filepath.EvalSymlinks(p)
	rd, err2 := filepath.EvalSymlinks(dir)
	return err1 == nil && err2 == nil && under(rp, rd)
}

func under(p, dir string) bool {
	return strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}
