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
)

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

// maxProblemsInMessage bounds the problems Error spells out.
const maxProblemsInMessage = 10

// Error names the first few bad events and counts the others.
func (e *BatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d bad", ErrInvalidEvent, len(e.Problems))
	if len(e.Problems) == 1 {
		b.WriteString(" event")
	} else {
		b.WriteString(" events")
	}
	for i, p := range e.Problems {
		if i == maxProblemsInMessage {
			fmt.Fprintf(&b, "; and %d more", len(e.Problems)-i)
			break
		}
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%sevent %d: %s", sep, p.Index, p.Reason)
	}
	return b.String()
}

// Is reports whether target is ErrInvalidEvent.
func (e *BatchError) Is(target error) bool { return target == ErrInvalidEvent }
