package event

import (
	"bytes"
	"errors"
	"fmt"
	"time"
)

// averageEventSize guesses the bytes per event of a JSON array, to size
// the columns of a Batch once.
const averageEventSize = 128

// maxPresized bounds the events a decoder makes room for before it
// reads them: 131,072, more than a request holds by default (the
// server's max_events, 100,000), 2.5 MB of columns.
const maxPresized = 1 << 17

// DecodeJSON decodes a request body holding a JSON array of events and
// checks every event against lim at time now. When any event is bad it
// returns no event and a *BatchError naming each bad one. A body that is
// not a JSON array gives an error wrapping ErrMalformedBody; so does a
// syntax error anywhere in the array, which leaves no way to tell where
// the next event begins. Invalid limits give an error wrapping
// ErrInvalidLimits.
func DecodeJSON(body []byte, lim Limits, now time.Time) (Batch, error) {
	if err := lim.Validate(); err != nil {
		return Batch{}, err
	}
	lim = lim.WithDefaults()
	p := newParser(body, &lim, now)
	p.ws()
	if p.peek() != '[' {
		return Batch{}, fmt.Errorf("%w: expected a JSON array of events, found %s", ErrMalformedBody, describe(body, p.pos))
	}
	p.pos++
	p.out.grow(min(len(body)/averageEventSize+1, 1<<16), len(body)/2)
	p.out.limit = DecodedTextBound(len(body))
	var problems []Problem
	var ids idIndex
	p.ws()
	if p.peek() == ']' {
		p.pos++
	} else {
		for i := 0; ; i++ {
			p.ws()
			if p.peek() == '{' {
				start := len(p.out.fields)
				ev, err := p.event()
				if err != nil {
					return Batch{}, decodeError(i, len(body), err)
				}
				reason := p.problem
				if reason == "" {
					reason = ids.repeat(ev.id, i)
				}
				if reason == "" {
					p.out.add(ev.time.UnixNano(), ev.series, ev.id)
					if p.out.over() {
						return Batch{}, tooLarge(len(body))
					}
				} else {
					p.out.fields = p.out.fields[:start]
					problems = append(problems, Problem{Index: i, Reason: reason})
				}
			} else {
				if err := p.skip(); err != nil {
					return Batch{}, malformed(i, err)
				}
				problems = append(problems, Problem{Index: i, Reason: "not a JSON object"})
			}
			more, err := p.separator(']', "after an event")
			if err != nil {
				return Batch{}, malformed(i, err)
			}
			if !more {
				break
			}
		}
	}
	p.ws()
	if p.pos != len(body) {
		return Batch{}, fmt.Errorf("%w: %v", ErrMalformedBody, p.errorf("data after the array of events"))
	}
	if problems != nil {
		return Batch{}, &BatchError{Problems: problems}
	}
	return p.out.batch(), nil
}

// DecodeNDJSON decodes a request body of newline-delimited JSON, one event
// per line, and checks every event against lim at time now. Blank lines
// are skipped and the last line need not end with a newline; a line that
// is not a JSON object is a bad event like any other. When any event is
// bad it returns no event and a *BatchError naming each bad one by its
// index among the non-blank lines. A non-empty body where no line holds a
// JSON object (plain text, a JSON array) gives an error wrapping
// ErrMalformedBody. Invalid limits give an error wrapping
// ErrInvalidLimits.
func DecodeNDJSON(body []byte, lim Limits, now time.Time) (Batch, error) {
	if err := lim.Validate(); err != nil {
		return Batch{}, err
	}
	lim = lim.WithDefaults()
	p := newParser(nil, &lim, now)
	// A body's events are at most its lines: the columns are made once,
	// of their size, rather than grown (and copied, and left to the
	// collector) a quarter at a time. A body of many blank lines makes
	// them no larger than maxPresized events.
	p.out.grow(min(bytes.Count(body, []byte{'\n'})+1, maxPresized), len(body)/2)
	p.out.limit = DecodedTextBound(len(body))
	var problems []Problem
	var ids idIndex
	index, objects, lineNo := 0, 0, 0
	firstBad := ""
	for rest := body; len(rest) > 0; {
		line := rest
		if nl := bytes.IndexByte(rest, '\n'); nl >= 0 {
			line, rest = rest[:nl], rest[nl+1:]
		} else {
			rest = nil
		}
		lineNo++
		p.data, p.pos = line, 0
		p.ws()
		if p.pos == len(line) {
			continue
		}
		i := index
		index++
		var reason string
		if p.peek() == '{' {
			start := len(p.out.fields)
			ev, err := p.event()
			if errors.Is(err, errTooLarge) {
				return Batch{}, tooLarge(len(body))
			}
			if err == nil {
				p.ws()
				if p.pos != len(line) {
					err = p.errorf("data after the event")
				}
			}
			switch {
			case err != nil:
				reason = lineSyntax(err)
			case p.problem != "":
				objects++
				reason = p.problem
			default:
				objects++
				if reason = ids.repeat(ev.id, i); reason == "" {
					p.out.add(ev.time.UnixNano(), ev.series, ev.id)
					if p.out.over() {
						return Batch{}, tooLarge(len(body))
					}
				}
			}
			if reason != "" {
				p.out.fields = p.out.fields[:start]
			}
		} else {
			err := p.skip()
			if err == nil {
				p.ws()
				if p.pos != len(line) {
					err = p.errorf("data after the value")
				}
			}
			if err != nil {
				reason = lineSyntax(err)
			} else {
				reason = "not a JSON object"
			}
		}
		if reason != "" {
			if firstBad == "" {
				firstBad = fmt.Sprintf("line %d: %s", lineNo, reason)
			}
			problems = append(problems, Problem{Index: i, Reason: reason})
		}
	}
	if index > 0 && objects == 0 {
		return Batch{}, fmt.Errorf("%w: no line holds a JSON object (%s)", ErrMalformedBody, firstBad)
	}
	if problems != nil {
		return Batch{}, &BatchError{Problems: problems}
	}
	return p.out.batch(), nil
}

// malformed reports a syntax error inside the i-th event of a JSON array.
func malformed(i int, err error) error {
	return fmt.Errorf("%w: event %d: %w", ErrMalformedBody, i, err)
}

// decodeError reports the parser's error err inside the i-th event of a
// JSON array of size bytes: the body too large decoded, or a syntax error.
func decodeError(i, size int, err error) error {
	if errors.Is(err, errTooLarge) {
		return tooLarge(size)
	}
	return malformed(i, err)
}

// tooLarge is the error of a body of size bytes whose events pass
// DecodedTextBound decoded.
func tooLarge(size int) error {
	return &DecodedTooLargeError{Size: size, Limit: DecodedTextBound(size)}
}

// lineSyntax describes a syntax error inside an NDJSON line.
func lineSyntax(err error) string {
	var se *syntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at column %d: %s", se.off+1, se.msg)
	}
	return "invalid JSON: " + err.Error()
}

// describe names what starts at body[pos], for errors about the body.
func describe(body []byte, pos int) string {
	if pos >= len(body) {
		if len(body) == 0 {
			return "an empty body"
		}
		return "only whitespace"
	}
	switch c := body[pos]; {
	case c == '{':
		return "an object"
	case c == '"':
		return "a string"
	case c == '-' || isDigit(c):
		return "a number"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	default:
		return fmt.Sprintf("%s at offset %d, which is not JSON", quoteByte(c), pos)
	}
}
