package restcatalog

import (
	"net/http"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// namespaceResponse is the spec's GetNamespaceResponse and
// CreateNamespaceResponse.
type namespaceResponse struct {
	Namespace  table.Identifier   `json:"namespace"`
	Properties iceberg.Properties `json:"properties"`
}

// listNamespaces answers the namespaces one level below ?parent= (the top
// level without it), as the spec asks: the SQL catalog lists every
// descendant, so deeper ones are cut to their child of parent.
func (s *Server) listNamespaces(w http.ResponseWriter, r *http.Request, wh *warehouse, _ params) error {
	var parent table.Identifier
	if q := r.URL.Query().Get("parent"); q != "" {
		parent = strings.Split(q, "\x1f")
	}
	all, err := wh.cat.ListNamespaces(r.Context(), parent)
	if err != nil {
		return err
	}
	out := []table.Identifier{}
	for _, ns := range all {
		if len(ns) <= len(parent) {
			continue
		}
		child := ns[:len(parent)+1]
		if !slices.ContainsFunc(out, func(o table.Identifier) bool { return slices.Equal(o, child) }) {
			out = append(out, child)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"namespaces": out})
	return nil
}

// createNamespace answers POST namespaces with the namespace as created.
func (s *Server) createNamespace(w http.ResponseWriter, r *http.Request, wh *warehouse, _ params) error {
	var req namespaceResponse
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if len(req.Namespace) == 0 {
		return badRequest("create namespace: the namespace is empty")
	}
	if err := wh.cat.CreateNamespace(r.Context(), req.Namespace, req.Properties); err != nil {
		return err
	}
	props, err := wh.cat.LoadNamespaceProperties(r.Context(), req.Namespace)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, namespaceResponse{Namespace: req.Namespace, Properties: props})
	return nil
}

// loadNamespace answers GET namespaces/{namespace} with its properties.
func (s *Server) loadNamespace(w http.ResponseWriter, r *http.Request, wh *warehouse, p params) error {
	props, err := wh.cat.LoadNamespaceProperties(r.Context(), p.ns)
	if err != nil {
		return err
	}
	if props == nil {
		props = iceberg.Properties{}
	}
	writeJSON(w, http.StatusOK, namespaceResponse{Namespace: p.ns, Properties: props})
	return nil
}

// namespaceExists answers HEAD namespaces/{namespace}: 204 or 404.
func (s *Server) namespaceExists(w http.ResponseWriter, r *http.Request, wh *warehouse, p params) error {
	ok, err := wh.cat.CheckNamespaceExists(r.Context(), p.ns)
	if err != nil {
		return err
	}
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return nil
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// dropNamespace answers DELETE namespaces/{namespace}: 204, 404, or 409
// when it still holds tables.
func (s *Server) dropNamespace(w http.ResponseWriter, r *http.Request, wh *warehouse, p params) error {
	if err := wh.cat.DropNamespace(r.Context(), p.ns); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// updateNamespace answers POST namespaces/{namespace}/properties with what
// was updated, removed and missing.
func (s *Server) updateNamespace(w http.ResponseWriter, r *http.Request, wh *warehouse, p params) error {
	var req struct {
		Removals []string           `json:"removals"`
		Updates  iceberg.Properties `json:"updates"`
	}
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	for _, k := range req.Removals {
		if _, both := req.Updates[k]; both {
			return badRequest("property %q is both removed and updated", k)
		}
	}
	sum, err := wh.cat.UpdateNamespaceProperties(r.Context(), p.ns, req.Removals, req.Updates)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, catalog.PropertiesUpdateSummary{
		Removed: nonNil(sum.Removed), Updated: nonNil(sum.Updated), Missing: nonNil(sum.Missing),
	})
	return nil
}

// nonNil returns s, or an empty slice for nil, so JSON says [] not null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
