package server

import (
	"fmt"
	"net/http"
	"strings"
)

// endpoint is the body of an authenticated /v1 handler: it writes its
// answer, or returns an error for the server to answer with.
type endpoint func(w http.ResponseWriter, r *http.Request, tenant string) error

// authenticated runs an endpoint for the tenant whose API key the request
// carries as "Authorization: Bearer <key>", and answers 401 without one.
func (s *Server) authenticated(ep endpoint) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := len(r.Header.Values("Authorization")); n > 1 {
			s.fail(w, r, &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf("timetable: %d Authorization headers: send one, Authorization: Bearer <api key>", n)})
			return
		}
		key, ok := bearerToken(r.Header.Get("Authorization"))
		if !ok {
			s.fail(w, r, &httpError{status: http.StatusUnauthorized, msg: "timetable: missing API key: send the header Authorization: Bearer <api key>"})
			return
		}
		t, err := s.db.Tenants().Authenticate(r.Context(), key)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if info := infoOf(r); info != nil {
			info.tenant = t.Name
		}
		if err := ep(w, r, t.Name); err != nil {
			s.fail(w, r, err)
		}
	})
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
