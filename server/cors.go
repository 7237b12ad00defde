package server

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// CORS (the Fetch standard's cross-origin resource sharing) lets pages of
// the origins in Options.CORSOrigins call the API from a browser.
//
// Decision: an allowed origin is echoed in Access-Control-Allow-Origin,
// with Vary: Origin, and any other gets no CORS header at all, so the
// browser keeps the answer from the page; the server itself answers as
// it would without CORS, since a client outside a browser sends what it
// likes anyway. No cookies are involved (keys travel in the Authorization
// header), so credentials are never allowed. A preflight (OPTIONS with
// Access-Control-Request-Method) from an allowed origin is answered 204
// with the methods and headers the API takes; from another, 403.

// corsMaxAge is how long, in seconds, a browser may keep a preflight's
// answer.
const corsMaxAge = "600"

// checkOrigins refuses an origin that is not "*" or scheme://host[:port]
// of http or https.
func checkOrigins(origins []string) error {
	for _, o := range origins {
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
			return fmt.Errorf("%w: CORS origin %q: use scheme://host[:port] with http or https, or *", errInvalidOptions, o)
		}
	}
	return nil
}

// allowedOrigin reports whether a request's Origin may see answers.
func (s *Server) allowedOrigin(origin string) bool {
	return origin != "" && (slices.Contains(s.opts.CORSOrigins, "*") || slices.Contains(s.opts.CORSOrigins, origin))
}

// cors adds the CORS headers for allowed origins and answers preflights.
func (s *Server) cors(next http.Handler) http.Handler {
	if len(s.opts.CORSOrigins) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		w.Header().Add("Vary", "Origin")
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		if !s.allowedOrigin(origin) {
			if preflight {
				s.fail(w, r, &httpError{status: http.StatusForbidden, msg: fmt.Sprintf("timetable: origin %q may not call this API; the server allows %s", origin, strings.Join(s.opts.CORSOrigins, ", "))})
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		if preflight {
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, DELETE")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Content-Encoding")
			h.Set("Access-Control-Max-Age", corsMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", "X-Request-Id, Retry-After, WWW-Authenticate")
		next.ServeHTTP(w, r)
	})
}
