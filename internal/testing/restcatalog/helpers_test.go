package restcatalog_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/testing/restcatalog"
)

const (
	clientID     = "geocompact"
	clientSecret = "s3cret-for-tests"
	credential   = clientID + ":" + clientSecret
)

// testServer is a Server behind httptest, counting the responses it sent
// by status.
type testServer struct {
	*restcatalog.Server
	URL       string
	conflicts atomic.Int64 // 409 responses
}

// newServer starts a server on a fresh warehouse with the test credential;
// opts fields left empty get defaults.
func newServer(t testing.TB, opts restcatalog.Options) *testServer {
	t.Helper()
	if opts.Warehouse == "" {
		opts.Warehouse = t.TempDir()
	}
	if opts.Credentials == nil {
		opts.Credentials = map[string]string{clientID: clientSecret}
	}
	if opts.StateDir == "" {
		opts.StateDir = t.TempDir()
	}
	srv, err := restcatalog.NewServer(opts)
	require.NoError(t, err)
	ts := &testServer{Server: srv}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		srv.ServeHTTP(rec, r)
		if rec.status == http.StatusConflict {
			ts.conflicts.Add(1)
		}
	}))
	ts.URL = hs.URL
	t.Cleanup(func() {
		hs.Close()
		require.NoError(t, srv.Close())
	})
	return ts
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// client opens iceberg-go's REST client on the server with the test
// credential and extra properties.
func (ts *testServer) client(t testing.TB, extra ...string) *rest.Catalog {
	t.Helper()
	props := iceberg.Properties{"type": "rest", "uri": ts.URL, "credential": credential}
	for i := 0; i+1 < len(extra); i += 2 {
		props[extra[i]] = extra[i+1]
	}
	cat, err := catalog.Load(t.Context(), "test", props)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cat.(*rest.Catalog).Close() })
	return cat.(*rest.Catalog)
}

// token fetches a bearer token with the test credential.
func (ts *testServer) token(t testing.TB) string {
	t.Helper()
	rsp, err := http.PostForm(ts.URL+"/v1/oauth/tokens", url.Values{
		"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {clientSecret},
	})
	require.NoError(t, err)
	defer rsp.Body.Close()
	require.Equal(t, http.StatusOK, rsp.StatusCode)
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	require.NoError(t, json.NewDecoder(rsp.Body).Decode(&tok))
	require.Equal(t, "bearer", tok.TokenType)
	require.NotEmpty(t, tok.AccessToken)
	return tok.AccessToken
}

// errorBody is the spec's IcebergErrorResponse.
type errorBody struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	} `json:"error"`
}

// do sends a raw request with the bearer token (none when empty) and
// returns the status and body.
func (ts *testServer) do(t testing.TB, method, path, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, ts.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rsp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer rsp.Body.Close()
	b, err := io.ReadAll(rsp.Body)
	require.NoError(t, err)
	return rsp.StatusCode, string(b)
}

// requireError checks that body is an ErrorModel with the given code and
// type.
func requireError(t testing.TB, body string, code int, typ string) {
	t.Helper()
	var e errorBody
	require.NoError(t, json.Unmarshal([]byte(body), &e), body)
	require.Equal(t, code, e.Error.Code, body)
	require.Equal(t, typ, e.Error.Type, body)
	require.NotEmpty(t, e.Error.Message, body)
}
