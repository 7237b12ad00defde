package api

import "net/http"

// ErrorBody is the JSON body of every error answer (any status that is
// not 2xx), on every route.
type ErrorBody struct {
	// Error is the server's words: what was wrong, and for a 5xx the
	// request id to find it in the server's log.
	Error string `json:"error"`
	// Problems lists the refused events of a write, by index in the
	// request.
	Problems []Problem `json:"problems,omitempty"`
	// Lines lists the refused lines of a line protocol write.
	Lines []LineProblem `json:"lines,omitempty"`
	// Written and Unwritten tell what a write that failed part-way
	// stored: every event not listed in Unwritten (indexes in the
	// request) is durable.
	Written   *int  `json:"written,omitempty"`
	Unwritten []int `json:"unwritten,omitempty"`
	// Code and Message are InfluxDB 2.x's, on its write endpoint
	// (/api/v2/write) only: CodeOf the status, and Error again.
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// Problem is one refused event of a write.
type Problem struct {
	// Index is the event's 0-based position: in the JSON array, or among
	// the non-blank lines of an NDJSON body.
	Index int `json:"index"`
	// Reason says what is wrong, starting with the key at fault, as in
	// "fields.speed: number out of DynamoDB's range".
	Reason string `json:"reason"`
}

// LineProblem is one refused line of a line protocol write.
type LineProblem struct {
	// Line is the line's number, 1-based.
	Line int `json:"line"`
	// Text is the start of the line, to find it by; absent for problems
	// found past decoding.
	Text string `json:"text,omitempty"`
	// Reason says what is wrong.
	Reason string `json:"reason"`
}

// Codes of error answers: the class of an HTTP status, as InfluxDB 2.x
// names it and the /api/v2/write endpoint writes it in ErrorBody.Code.
// CodeOf gives the code of any status.
const (
	// CodeInvalid: a 4xx other than those below (400 a bad request, 403
	// a read-only key writing, 405, 408 a body too slow, 409 a tenant
	// that exists or a damaged archive, 415 a Content-Type the server
	// does not read).
	CodeInvalid = "invalid"
	// CodeUnauthorized: 401, no credential or one the server refused.
	CodeUnauthorized = "unauthorized"
	// CodeNotFound: 404, no such route, table, tenant or key.
	CodeNotFound = "not found"
	// CodeTooLarge: 413, a body or a batch over the server's limits.
	CodeTooLarge = "request too large"
	// CodeUnavailable: 503, sent with Retry-After: the store throttled or
	// could not be reached, the server is busy or closing; the same
	// request may succeed after the wait.
	CodeUnavailable = "unavailable"
	// CodeInternal: another 5xx; the request may be retried whole.
	CodeInternal = "internal error"
)

// CodeOf returns the code of an error answer's HTTP status.
func CodeOf(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return CodeUnauthorized
	case status == http.StatusNotFound:
		return CodeNotFound
	case status == http.StatusRequestEntityTooLarge:
		return CodeTooLarge
	case status == http.StatusServiceUnavailable:
		return CodeUnavailable
	case status >= 500:
		return CodeInternal
	default:
		return CodeInvalid
	}
}

// RetryAfter is the header of a 503 that a retry may cure: the seconds
// to wait before sending the same request again.
const RetryAfter = "Retry-After"
