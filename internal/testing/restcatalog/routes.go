package restcatalog

import (
	"net/http"
	"strings"

	"github.com/apache/iceberg-go/table"
)

// params are the namespace and table named in a route's path.
type params struct {
	ns    table.Identifier
	table string
}

// ident is the table identifier the params name.
func (p params) ident() table.Identifier {
	return append(append(table.Identifier{}, p.ns...), p.table)
}

// handler serves one route; a returned error is written as an ErrorModel.
type handler func(s *Server, w http.ResponseWriter, r *http.Request, wh *warehouse, p params) error

// route is one operation: a method and a path under /v1/{prefix}/, where
// {namespace} and {table} are parameters.
type route struct {
	method, path string
	h            handler
	advertised   bool
}

// routes lists what the server serves, in the spec's path templates.
var routes = []route{
	{http.MethodGet, "namespaces", (*Server).listNamespaces, true},
	{http.MethodPost, "namespaces", (*Server).createNamespace, true},
	{http.MethodGet, "namespaces/{namespace}", (*Server).loadNamespace, true},
	{http.MethodHead, "namespaces/{namespace}", (*Server).namespaceExists, true},
	{http.MethodDelete, "namespaces/{namespace}", (*Server).dropNamespace, true},
	{http.MethodPost, "namespaces/{namespace}/properties", (*Server).updateNamespace, true},
	{http.MethodGet, "namespaces/{namespace}/tables", (*Server).listTables, true},
	{http.MethodPost, "namespaces/{namespace}/tables", (*Server).createTable, true},
	{http.MethodPost, "namespaces/{namespace}/register", (*Server).registerTable, true},
	{http.MethodGet, "namespaces/{namespace}/tables/{table}", (*Server).loadTable, true},
	{http.MethodHead, "namespaces/{namespace}/tables/{table}", (*Server).tableExists, true},
	{http.MethodPost, "namespaces/{namespace}/tables/{table}", (*Server).commitTable, true},
	{http.MethodDelete, "namespaces/{namespace}/tables/{table}", (*Server).dropTable, true},
	{http.MethodPost, "tables/rename", (*Server).renameTable, true},
	{http.MethodPost, "transactions/commit", (*Server).commitTransaction, false},
}

// endpoints lists the advertised routes in the config response's
// "METHOD /v1/{prefix}/path" form.
func endpoints() []string {
	var out []string
	for _, rt := range routes {
		if rt.advertised {
			out = append(out, rt.method+" /v1/{prefix}/"+rt.path)
		}
	}
	return out
}

// match reports whether segs fit the route's path, filling p.
func (rt route) match(segs []string, p *params) (bool, error) {
	parts := strings.Split(rt.path, "/")
	if len(parts) != len(segs) {
		return false, nil
	}
	var q params
	for i, part := range parts {
		switch part {
		case "{namespace}":
			q.ns = table.Identifier(strings.Split(segs[i], "\x1f"))
		case "{table}":
			q.table = segs[i]
		default:
			if part != segs[i] {
				return false, nil
			}
		}
	}
	for _, level := range q.ns {
		if level == "" {
			return true, badRequest("namespace %q has an empty level", strings.Join(q.ns, "."))
		}
	}
	*p = q
	return true, nil
}

// dispatch runs the route that matches the request's method and path.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, wh *warehouse, segs []string) error {
	for _, rt := range routes {
		var p params
		ok, err := rt.match(segs, &p)
		if err != nil {
			return err
		}
		if ok && rt.method == r.Method {
			return rt.h(s, w, r, wh, p)
		}
	}
	return badRequest("no route for %s %s", r.Method, r.URL.Path)
}

// commitTransaction refuses multi-table commits, which the server does not
// advertise: it cannot make them atomic over the SQL catalog.
func (s *Server) commitTransaction(w http.ResponseWriter, r *http.Request, wh *warehouse, p params) error {
	return errUnsupported
}
