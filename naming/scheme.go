package naming

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalidNamer is wrapped by the errors of ParseScheme and
// Namer.Validate.
var ErrInvalidNamer = errors.New("timetable: invalid table naming")

// Scheme is a way of writing a period (and a write month) into a table
// name. The zero Scheme is not a scheme.
type Scheme int

// The schemes a family may choose.
const (
	// Range writes the period's first and last second as Unix
	// milliseconds, as Fineo did.
	Range Scheme = iota + 1
	// Date writes the period's start as a date, as the AWS blog did.
	Date
)

// ParseScheme reads a scheme by name, "range" or "date", in any letter
// case.
func ParseScheme(s string) (Scheme, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "range":
		return Range, nil
	case "date":
		return Date, nil
	}
	return 0, fmt.Errorf("parse naming scheme %q: %w: want range or date", s, ErrInvalidNamer)
}

// String returns the name ParseScheme reads: "range" or "date".
func (s Scheme) String() string {
	switch s {
	case Range:
		return "range"
	case Date:
		return "date"
	}
	return "Scheme(" + strconv.Itoa(int(s)) + ")"
}
