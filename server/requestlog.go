package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"time"
)

// requestInfo is what the request log learns while a request is served.
// It belongs to the request's goroutine.
type requestInfo struct {
	reqID  string
	tenant string
	err    error
}

// id returns the request id, or "-" for none.
func (i *requestInfo) id() string {
	if i == nil {
		return "-"
	}
	return i.reqID
}

type infoKey struct{}

// statusClientClosed is what the request log says of a request whose
// client went away before it was answered (nginx's 499); no answer is
// sent.
const statusClientClosed = 499

// infoOf returns the requestInfo of a request, or nil outside logRequests.
func infoOf(r *http.Request) *requestInfo {
	info, _ := r.Context().Value(infoKey{}).(*requestInfo)
	return info
}

// newRequestID returns 16 random hex digits.
func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails, as crypto/rand documents
	return hex.EncodeToString(b[:])
}

// logRequests gives each request an id (in the X-Request-Id header) and
// logs it once it is answered.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{reqID: newRequestID()}
		w.Header().Set("X-Request-Id", info.reqID)
		sw := &statusWriter{ResponseWriter: w}
		r = r.WithContext(context.WithValue(r.Context(), infoKey{}, info))
		next.ServeHTTP(sw, r)

		code := sw.code()
		if sw.status == 0 && info.err != nil {
			code = statusClientClosed
		}
		level := slog.LevelInfo
		switch {
		case code >= 500:
			level = slog.LevelError
		case r.Pattern == "GET "+routeHealthz || r.Pattern == "GET "+routeReadyz || r.Pattern == "GET "+routeMetrics:
			level = slog.LevelDebug
		}
		ctx := context.WithoutCancel(r.Context())
		if !s.log.Enabled(ctx, level) {
			return
		}
		attrs := []slog.Attr{
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.String("route", r.Pattern),
			slog.Int("status", code),
			slog.Duration("duration", time.Since(start)),
			slog.Int64("bytes_in", r.ContentLength),
			slog.Int64("bytes_out", sw.bytes),
			slog.String("remote", r.RemoteAddr),
			slog.String("request_id", info.reqID),
		}
		if info.tenant != "" {
			attrs = append(attrs, slog.String("tenant", info.tenant))
		}
		if info.err != nil {
			attrs = append(attrs, slog.String("error", info.err.Error()))
		}
		s.log.LogAttrs(ctx, level, "http request", attrs...)
	})
}

// statusWriter records the status and size of an answer.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// code returns the status sent, 200 when the handler wrote nothing.
func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
