package restcatalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// errBadRequest marks a request the server cannot act on as sent: a body
// that does not decode, a missing field, updates that do not apply.
var errBadRequest = errors.New("restcatalog: bad request")

// errUnsupported marks an operation the server does not implement.
var errUnsupported = errors.New("restcatalog: not supported")

// errorModel is the spec's ErrorModel, wrapped in IcebergErrorResponse.
type errorModel struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    int    `json:"code"`
}

// badRequest returns an errBadRequest with the given detail.
func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errBadRequest, fmt.Sprintf(format, args...))
}

// classify maps an error to the HTTP status and the exception type the spec
// names for it.
func classify(err error) (int, string) {
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable):
		return http.StatusNotFound, "NoSuchTableException"
	case errors.Is(err, catalog.ErrNoSuchNamespace):
		return http.StatusNotFound, "NoSuchNamespaceException"
	case errors.Is(err, catalog.ErrTableAlreadyExists), errors.Is(err, catalog.ErrNamespaceAlreadyExists),
		errors.Is(err, catalog.ErrViewAlreadyExists):
		return http.StatusConflict, "AlreadyExistsException"
	case errors.Is(err, catalog.ErrNamespaceNotEmpty):
		return http.StatusConflict, "NamespaceNotEmptyException"
	case errors.Is(err, table.ErrCommitFailed):
		return http.StatusConflict, "CommitFailedException"
	case errors.Is(err, errBadRequest):
		return http.StatusBadRequest, "BadRequestException"
	case errors.Is(err, errUnsupported):
		return http.StatusNotAcceptable, "UnsupportedOperationException"
	}
	return http.StatusInternalServerError, "ServerErrorException"
}

// writeError answers with err in the ErrorModel shape.
func writeError(w http.ResponseWriter, err error) {
	status, typ := classify(err)
	writeErrorStatus(w, status, typ, err.Error())
}

// writeErrorStatus answers with an ErrorModel of the given status and type.
func writeErrorStatus(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]errorModel{"error": {Message: msg, Type: typ, Code: status}})
}

// writeJSON answers with v encoded as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// decodeBody decodes the request body into v, as a bad request when it
// does not decode.
func decodeBody(r *http.Request, v any) error {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		return badRequest("decode %s %s body: %v", r.Method, r.URL.Path, err)
	}
	return nil
}
