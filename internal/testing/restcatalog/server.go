package restcatalog

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	// The "sqlite" database/sql driver (pure Go).
	_ "github.com/uptrace/bun/driver/sqliteshim"
	// Object stores for s3://, gs:// and abfs:// warehouses.
	_ "github.com/apache/iceberg-go/io/gocloud"
)

// catalogName is the name the SQL catalogs record on every row.
const catalogName = "rest"

// Options configures a Server.
type Options struct {
	// Warehouse is the server's own warehouse: a local directory, or a
	// file:// or s3:// URI. Required.
	Warehouse string
	// Prefix, when set, is sent in the config overrides for Warehouse, and
	// that warehouse's routes then live only under /v1/{Prefix}/. Empty
	// serves it at /v1/namespaces... directly.
	Prefix string
	// StateDir holds the SQLite catalogs of object-store warehouses (a
	// local warehouse keeps its catalog in rest-catalog.db inside it).
	// Empty means a temporary directory that Close removes.
	StateDir string
	// Credentials maps OAuth2 client ids to secrets. When it is not empty,
	// every route but POST /v1/oauth/tokens needs a bearer token issued
	// for one of them. Empty means no authentication.
	Credentials map[string]string
	// TokenTTL is how long an issued token lives (sent as expires_in).
	// Zero means tokens never expire.
	TokenTTL time.Duration
	// Props are given to every SQL catalog the server opens: object-store
	// settings such as s3.endpoint, s3.region and
	// s3.force-virtual-addressing.
	Props map[string]string
}

// Server is an Iceberg REST catalog over iceberg-go's SQL catalog. It is
// an http.Handler; Close releases its catalogs.
type Server struct {
	opts     Options
	tokens   *tokenStore
	stateDir string
	ownState bool
	locks    sync.Map // lock key -> *sync.Mutex

	mu       sync.Mutex
	byPrefix map[string]*warehouse
	byURI    map[string]*warehouse
	def      *warehouse
}

// warehouse is one SQL catalog and the prefix its routes live under.
type warehouse struct {
	uri    string
	prefix string
	db     *sql.DB
	cat    *sqlcat.Catalog
	props  iceberg.Properties
}

var _ http.Handler = (*Server)(nil)

// NewServer opens the catalog of opts.Warehouse (creating its SQLite file
// on first use) and returns a server for it.
func NewServer(opts Options) (*Server, error) {
	if opts.Warehouse == "" {
		return nil, errors.New("restcatalog: a warehouse is required (a directory or an s3:// URI)")
	}
	if strings.Contains(opts.Prefix, "/") {
		return nil, fmt.Errorf("restcatalog: prefix %q has a slash; use one path segment", opts.Prefix)
	}
	s := &Server{
		opts:     opts,
		tokens:   &tokenStore{creds: opts.Credentials, ttl: opts.TokenTTL, now: time.Now, tokens: map[string]time.Time{}},
		stateDir: opts.StateDir,
		byPrefix: map[string]*warehouse{},
		byURI:    map[string]*warehouse{},
	}
	if s.stateDir == "" {
		dir, err := os.MkdirTemp("", "geocompact-rest-")
		if err != nil {
			return nil, fmt.Errorf("restcatalog: create state directory: %w", err)
		}
		s.stateDir, s.ownState = dir, true
	}
	uri, err := normaliseWarehouse(opts.Warehouse)
	if err != nil {
		s.Close()
		return nil, err
	}
	if s.def, err = s.open(uri, opts.Prefix); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// TokensIssued returns how many OAuth2 tokens the server has handed out.
func (s *Server) TokensIssued() int { return s.tokens.count() }

// Close closes every catalog the server opened and removes its temporary
// state directory.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, wh := range s.byURI {
		errs = append(errs, wh.cat.Close(), wh.db.Close())
	}
	s.byURI, s.byPrefix = map[string]*warehouse{}, map[string]*warehouse{}
	if s.ownState {
		errs = append(errs, os.RemoveAll(s.stateDir))
	}
	return errors.Join(errs...)
}

// normaliseWarehouse turns a directory into a file:// URI and trims a
// trailing slash from a URI.
func normaliseWarehouse(wh string) (string, error) {
	if strings.Contains(wh, "://") {
		u, err := url.Parse(wh)
		if err != nil || u.Host == "" && u.Scheme != "file" {
			return "", fmt.Errorf("restcatalog: warehouse %q is not a URI with a bucket or a file:// path", wh)
		}
		return strings.TrimSuffix(wh, "/"), nil
	}
	dir, err := filepath.Abs(wh)
	if err != nil {
		return "", fmt.Errorf("restcatalog: warehouse %q: %w", wh, err)
	}
	return "file://" + dir, nil
}

// warehouseFor returns the catalog of the warehouse a client asked for in
// GET /v1/config, opening it on first use; empty means the server's own.
func (s *Server) warehouseFor(requested string) (*warehouse, error) {
	if requested == "" {
		return s.def, nil
	}
	uri, err := normaliseWarehouse(requested)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBadRequest, err)
	}
	s.mu.Lock()
	wh := s.byURI[uri]
	s.mu.Unlock()
	if wh != nil {
		return wh, nil
	}
	sum := sha256.Sum256([]byte(uri))
	return s.open(uri, "wh-"+hex.EncodeToString(sum[:6]))
}

// open opens (or returns) the SQL catalog of the warehouse uri and
// registers it under prefix.
func (s *Server) open(uri, prefix string) (*warehouse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if wh := s.byURI[uri]; wh != nil {
		return wh, nil
	}
	dbPath := filepath.Join(s.stateDir, prefix+".db")
	if dir, ok := strings.CutPrefix(uri, "file://"); ok {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("restcatalog: create warehouse: %w", err)
		}
		dbPath = filepath.Join(dir, "rest-catalog.db")
	}
	db, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		return nil, fmt.Errorf("restcatalog: open %s: %w", dbPath, err)
	}
	props := iceberg.Properties{"warehouse": uri}
	for k, v := range s.opts.Props {
		props[k] = v
	}
	cat, err := sqlcat.NewCatalog(catalogName, db, sqlcat.SQLite, props)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("restcatalog: open SQL catalog for %s: %w", uri, err)
	}
	wh := &warehouse{uri: uri, prefix: prefix, db: db, cat: cat, props: props}
	s.byURI[uri], s.byPrefix[prefix] = wh, wh
	return wh, nil
}

// lock takes the locks of the given tables of wh, in a fixed order so
// that two requests never wait on each other, and returns their release.
func (s *Server) lock(wh *warehouse, idents ...table.Identifier) func() {
	keys := make([]string, len(idents))
	for i, id := range idents {
		keys[i] = wh.uri + "\x00" + strings.Join(id, "\x00")
	}
	if len(keys) == 2 && keys[1] < keys[0] {
		keys[0], keys[1] = keys[1], keys[0]
	}
	if len(keys) == 2 && keys[0] == keys[1] {
		keys = keys[:1]
	}
	var held []*sync.Mutex
	for _, k := range keys {
		m, _ := s.locks.LoadOrStore(k, new(sync.Mutex))
		mu := m.(*sync.Mutex)
		mu.Lock()
		held = append(held, mu)
	}
	return func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i].Unlock()
		}
	}
}

// ServeHTTP authenticates the request and routes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.EscapedPath()
	if p == "/v1/oauth/tokens" {
		s.tokens.serveToken(w, r)
		return
	}
	if s.tokens.enabled() {
		if ok, why := s.tokens.check(r); !ok {
			writeErrorStatus(w, http.StatusUnauthorized, "NotAuthorizedException", why)
			return
		}
	}
	if p == "/v1/config" && r.Method == http.MethodGet {
		s.serveConfig(w, r)
		return
	}
	wh, segs, err := s.resolve(p)
	if err == nil {
		err = s.dispatch(w, r, wh, segs)
	}
	if err != nil {
		writeError(w, err)
	}
}

// resolve finds the warehouse a path addresses (by its prefix, or the
// unprefixed default) and returns the path's remaining, unescaped segments.
func (s *Server) resolve(p string) (*warehouse, []string, error) {
	rest, ok := strings.CutPrefix(p, "/v1/")
	if !ok {
		return nil, nil, badRequest("no route for %s: paths start with /v1/", p)
	}
	raw := strings.Split(rest, "/")
	segs := make([]string, len(raw))
	for i, r := range raw {
		seg, err := url.PathUnescape(r)
		if err != nil {
			return nil, nil, badRequest("path %s: %v", p, err)
		}
		segs[i] = seg
	}
	s.mu.Lock()
	wh := s.byPrefix[segs[0]]
	if wh == nil || segs[0] == "" {
		wh = s.byPrefix[""]
	} else {
		segs = segs[1:]
	}
	s.mu.Unlock()
	if wh == nil {
		return nil, nil, badRequest("no route for %s: call GET /v1/config for the prefix", p)
	}
	return wh, segs, nil
}

// serveConfig answers GET /v1/config: the prefix of the warehouse asked
// for, and the endpoints the server supports.
func (s *Server) serveConfig(w http.ResponseWriter, r *http.Request) {
	wh, err := s.warehouseFor(r.URL.Query().Get("warehouse"))
	if err != nil {
		writeError(w, err)
		return
	}
	overrides := map[string]string{"warehouse": wh.uri}
	if wh.prefix != "" {
		overrides["prefix"] = wh.prefix
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"defaults":  map[string]string{},
		"overrides": overrides,
		"endpoints": endpoints(),
	})
}
