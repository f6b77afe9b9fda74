package restcatalog

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"
)

// tokenStore issues and checks OAuth2 bearer tokens for the client
// credentials the server was given.
type tokenStore struct {
	creds map[string]string // client id -> secret
	ttl   time.Duration     // zero: tokens never expire
	now   func() time.Time

	mu     sync.Mutex
	tokens map[string]time.Time // token -> expiry (zero: never)
	issued int
}

// enabled reports whether requests need a bearer token.
func (s *tokenStore) enabled() bool { return len(s.creds) > 0 }

// serveToken answers POST /v1/oauth/tokens for the client-credentials
// grant, with the credentials in the form or in HTTP basic auth. Errors
// follow RFC 6749 section 5.2, as the spec's OAuthError does.
func (s *tokenStore) serveToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "invalid_request", "error_description": "use POST"})
		return
	}
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": err.Error()})
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != "client_credentials" {
		writeJSON(w, http.StatusBadRequest, map[string]string{
			"error": "unsupported_grant_type", "error_description": "grant_type " + gt + " is not supported; use client_credentials",
		})
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	want, known := s.creds[id]
	if !known || subtle.ConstantTimeCompare([]byte(want), []byte(secret)) != 1 {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": "unknown client id or wrong secret"})
		return
	}
	tok := s.issue()
	rsp := map[string]any{
		"access_token":      tok,
		"token_type":        "bearer",
		"issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
	}
	if s.ttl > 0 {
		rsp["expires_in"] = int(s.ttl.Round(time.Second) / time.Second)
	}
	writeJSON(w, http.StatusOK, rsp)
}

// issue creates a new token.
func (s *tokenStore) issue() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	var exp time.Time
	if s.ttl > 0 {
		exp = s.now().Add(s.ttl)
	}
	s.tokens[tok] = exp
	s.issued++
	return tok
}

// Issued returns how many tokens have been handed out.
func (s *tokenStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued
}

// check reports whether r carries a live bearer token, and why not.
func (s *tokenStore) check(r *http.Request) (bool, string) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || tok == "" {
		return false, "missing bearer token: send Authorization: Bearer <token> from POST /v1/oauth/tokens"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, known := s.tokens[tok]
	if !known {
		return false, "unknown bearer token"
	}
	if !exp.IsZero() && !s.now().Before(exp) {
		delete(s.tokens, tok)
		return false, "bearer token expired: fetch a new one from POST /v1/oauth/tokens"
	}
	return true, ""
}
