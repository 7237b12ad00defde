package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/timetabledb/timetable/tenant"
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

// keySource finds the API key a request carries, or returns the error to
// answer with: a 401 without one, a 400 for a request that is ambiguous.
type keySource func(r *http.Request) (string, error)

// authenticated runs an endpoint for the tenant whose API key the request
// carries as "Authorization: Bearer <key>", when the key gives the access
// the route needs; it answers 401 without a key or with one unknown or
// revoked, and 403 for a read-only key on a route that writes.
func (s *Server) authenticated(need access, ep endpoint) http.Handler {
	return s.authenticatedBy(apiKey, need, ep)
}

// authenticatedBy is authenticated with the key keyOf finds in the
// request.
func (s *Server) authenticatedBy(keyOf keySource, need access, ep endpoint) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k, _, err := s.authenticate(r, keyOf, need)
		if err == nil {
			err = ep(w, r, k.Tenant)
		}
		if err != nil {
			s.fail(w, r, err)
		}
	})
}

// authenticate returns the API key keyOf finds in the request, through
// the write pipeline's first stage (ingest.Pipeline.Authenticate), and
// its secret; or the error to answer: 401 without a key or with one
// unknown or revoked, and 403 for a read-only key where need is
// writeAccess.
func (s *Server) authenticate(r *http.Request, keyOf keySource, need access) (tenant.Key, string, error) {
	secret, err := keyOf(r)
	if err != nil {
		return tenant.Key{}, "", err
	}
	k, err := s.ingest.Authenticate(r.Context(), secret)
	if err != nil {
		return tenant.Key{}, "", err
	}
	if info := infoOf(r); info != nil {
		info.tenant = k.Tenant
	}
	if need == writeAccess && !k.CanWrite() {
		return tenant.Key{}, "", &httpError{status: http.StatusForbidden, msg: fmt.Sprintf("timetable: API key %s is read-only: writing needs a key of scope all", k.ID)}
	}
	return k, secret, nil
}

// apiKey is the key of the /v1 API: "Authorization: Bearer <key>".
func apiKey(r *http.Request) (string, error) { return credential(r, "API key") }

// influxKey is the key of the InfluxDB write endpoints, where clients
// send it as InfluxDB takes a token or password: "Authorization: Token
// <key>" (or Bearer), the password of Basic authentication, or the p=
// parameter of InfluxDB 1.x. The user name is not read. Two different
// keys in one request are a 400.
func influxKey(r *http.Request) (string, error) {
	return influxKeyOf(r, r.URL.Query()["p"])
}

// influxQueryKey is influxKey for /query, whose p= may be in a form
// body as well as in the URL: it reads the form, at most maxQueryForm
// bytes, before the key is looked up, so that a key in the body is
// checked against the header's as one in the URL is.
func influxQueryKey(r *http.Request) (string, error) {
	r.Body = http.MaxBytesReader(nil, r.Body, maxQueryForm)
	if err := r.ParseForm(); err != nil {
		return "", &httpError{status: http.StatusBadRequest, msg: "timetable: read the form of /query: " + err.Error()}
	}
	return influxKeyOf(r, r.Form["p"])
}

// influxKeyOf is influxKey with the values of p= given.
func influxKeyOf(r *http.Request, ps []string) (string, error) {
	const how = "Authorization: Token <api key>, or the key as the password (Basic authentication or p=)"
	header, err := authorization(r, how)
	if err != nil {
		return "", err
	}
	var key string
	if header != "" {
		scheme, token, _ := strings.Cut(header, " ")
		switch {
		case strings.EqualFold(scheme, "Token"), strings.EqualFold(scheme, "Bearer"):
			key = strings.TrimSpace(token)
		case strings.EqualFold(scheme, "Basic"):
			_, key, _ = r.BasicAuth()
		default:
			return "", &httpError{status: http.StatusUnauthorized, msg: fmt.Sprintf("timetable: Authorization scheme %q is not supported; send %s", scheme, how)}
		}
	}
	for _, p := range ps {
		if p == "" {
			continue
		}
		if key != "" && key != p {
			return "", &httpError{status: http.StatusBadRequest, msg: "timetable: two different API keys, in the Authorization header and in p=: send one"}
		}
		key = p
	}
	if key == "" {
		return "", &httpError{status: http.StatusUnauthorized, msg: "timetable: missing API key: send " + how}
	}
	return key, nil
}

// credential returns the bearer token a request carries, or the error to
// answer: 400 for two Authorization headers, 401 for none. what names the
// credential the route takes ("API key", "admin token").
func credential(r *http.Request, what string) (string, error) {
	header, err := authorization(r, fmt.Sprintf("Authorization: Bearer <%s>", strings.ToLower(what)))
	if err != nil {
		return "", err
	}
	token, ok := bearerToken(header)
	if !ok {
		return "", &httpError{status: http.StatusUnauthorized, msg: fmt.Sprintf("timetable: missing %s: send the header Authorization: Bearer <%s>", what, strings.ToLower(what))}
	}
	return token, nil
}

// authorization returns the request's Authorization header, "" when
// there is none, and refuses a request with several: how says what to
// send instead.
func authorization(r *http.Request, how string) (string, error) {
	if n := len(r.Header.Values("Authorization")); n > 1 {
		return "", &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf("timetable: %d Authorization headers: send one, %s", n, how)}
	}
	return r.Header.Get("Authorization"), nil
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
