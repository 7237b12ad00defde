package event

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrInvalidEvent marks an event that breaks a rule of the package
	// documentation. Validate's errors and *BatchError match it with
	// errors.Is.
	ErrInvalidEvent = errors.New("timetable: invalid event")
	// ErrMalformedBody marks a request body that is not JSON at all, or,
	// for DecodeJSON, not a JSON array; no event of it is examined.
	ErrMalformedBody = errors.New("timetable: malformed request body")
	// ErrInvalidLimits marks a Limits that Limits.Validate refuses.
	ErrInvalidLimits = errors.New("timetable: invalid event limits")
	// ErrDecodedTooLarge marks a request body whose events take more
	// bytes decoded than a body of its size may (DecodedTextBound):
	// numbers are stored with every digit, so that 1e125, five bytes of
	// text, takes 126. A *DecodedTooLargeError matches it.
	ErrDecodedTooLarge = errors.New("timetable: request body too large decoded")
)

// DecodedTooLargeError is the error a decoder returns when the events
// of a body of Size bytes pass Limit bytes decoded (DecodedTextBound of
// Size): it stops there, and returns no event. It matches
// ErrDecodedTooLarge with errors.Is.
type DecodedTooLargeError struct {
	// Size is the body's length in bytes.
	Size int
	// Limit is DecodedTextBound(Size).
	Limit int64
}

// Error names the limit and what passes it.
func (e *DecodedTooLargeError) Error() string {
	return fmt.Sprintf("%s: a body of %d bytes may decode to at most %d bytes of fields, series and ids (twice the body and %d bytes more), "+
		"and numbers are stored with every digit (1e125 takes 126): split the batch, or send fewer numbers with large exponents",
		ErrDecodedTooLarge, e.Size, e.Limit, DecodedSlack)
}

// Is reports whether target is ErrDecodedTooLarge.
func (e *DecodedTooLargeError) Is(target error) bool { return target == ErrDecodedTooLarge }

// ValidationError is the error Validate returns for an event that breaks
// a rule. It matches ErrInvalidEvent with errors.Is.
type ValidationError struct {
	// Reason says what is wrong, as a Problem's Reason does.
	Reason string
}

// Error returns the reason after ErrInvalidEvent's text.
func (e *ValidationError) Error() string { return ErrInvalidEvent.Error() + ": " + e.Reason }

// Is reports whether target is ErrInvalidEvent.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalidEvent }

// Problem is what is wrong with one event of a request.
type Problem struct {
	// Index is the event's 0-based position: in the JSON array, or among
	// the non-blank lines of an NDJSON body.
	Index int `json:"index"`
	// Reason says what is wrong, starting with the key at fault, as in
	// "fields.speed: number out of DynamoDB's range".
	Reason string `json:"reason"`
}

// BatchError lists every bad event of a request; when a decoder returns
// it, no event of the request may be written.
type BatchError struct {
	// Problems holds one problem per bad event, in index order.
	Problems []Problem
}

// MaxProblemsInMessage bounds the problems an error message spells out.
const MaxProblemsInMessage = 10

// ListProblems returns how an error message lists n problems after its
// count: ": " and the first MaxProblemsInMessage of them, separated by
// "; ", then "; and N more" for the others; describe returns the i-th
// problem's text. BatchError and lineproto.Error list theirs with it.
func ListProblems(n int, describe func(i int) string) string {
	var b strings.Builder
	for i := range n {
		if i == MaxProblemsInMessage {
			fmt.Fprintf(&b, "; and %d more", n-i)
			break
		}
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(describe(i))
	}
	return b.String()
}

// Error names the first few bad events and counts the others.
func (e *BatchError) Error() string {
	noun := "events"
	if len(e.Problems) == 1 {
		noun = "event"
	}
	return fmt.Sprintf("%s: %d bad %s", ErrInvalidEvent, len(e.Problems), noun) +
		ListProblems(len(e.Problems), func(i int) string {
			return fmt.Sprintf("event %d: %s", e.Problems[i].Index, e.Problems[i].Reason)
		})
}

// Is reports whether target is ErrInvalidEvent.
func (e *BatchError) Is(target error) bool { return target == ErrInvalidEvent }
