package server

import (
	"fmt"
	"net/http"
	"strings"
)

// endpoint is the body of an authenticated /v1 handler: it writes its
// answer, or returns an error for the server to answer with.
type endpoint func(w http.ResponseWriter, r *http.Request, tenant string) error

// access is what a route needs of an API key.
type access int

const (
	// readAccess: any live key of the tenant.
	readAccess access = iota
	// writeAccess: a live key of scope all; a read-only key gets 403.
	writeAccess
)

// authenticated runs an endpoint for the tenant whose API key the request
// carries as "Authorization: Bearer <key>", when the key gives the access
// the route needs; it answers 401 without a key or with one unknown or
// revoked, and 403 for a read-only key on a route that writes.
func (s *Server) authenticated(need access, ep endpoint) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := credential(r, "API key")
		if err != nil {
			s.fail(w, r, err)
			return
		}
		k, err := s.db.Tenants().Authenticate(r.Context(), key)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if info := infoOf(r); info != nil {
			info.tenant = k.Tenant
		}
		if need == writeAccess && !k.CanWrite() {
			s.fail(w, r, &httpError{status: http.StatusForbidden, msg: fmt.Sprintf("timetable: API key %s is read-only: writing needs a key of scope all", k.ID)})
			return
		}
		if err := ep(w, r, k.Tenant); err != nil {
			s.fail(w, r, err)
		}
	})
}

// credential returns the bearer token a request carries, or the error to
// answer: 400 for two Authorization headers, 401 for none. what names the
// credential the route takes ("API key", "admin token").
func credential(r *http.Request, what string) (string, error) {
	if n := len(r.Header.Values("Authorization")); n > 1 {
		return "", &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf("timetable: %d Authorization headers: send one, Authorization: Bearer <%s>", n, strings.ToLower(what))}
	}
	token, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		return "", &httpError{status: http.StatusUnauthorized, msg: fmt.Sprintf("timetable: missing %s: send the header Authorization: Bearer <%s>", what, strings.ToLower(what))}
	}
	return token, nil
}

// bearerToken returns the token of an Authorization header of the Bearer
// scheme (RFC 6750; the scheme name is case-insensitive).
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
