package naming

import (
	"errors"
	"fmt"
)

// ErrInvalidTableName is wrapped by the errors of ValidTableName.
var ErrInvalidTableName = errors.New("timetable: invalid table name")

// Limits on DynamoDB table names.
const (
	// MinTableNameLen is the length of the shortest table name.
	MinTableNameLen = 3
	// MaxTableNameLen is the length of the longest table name.
	MaxTableNameLen = 255
)

// ValidTableName reports whether s is a name DynamoDB accepts for a table:
// 3 to 255 characters, each a letter, a digit, '_', '-' or '.'.
func ValidTableName(s string) error {
	if len(s) < MinTableNameLen || len(s) > MaxTableNameLen {
		return fmt.Errorf("table name %q: %w: %d characters, want %d to %d", s, ErrInvalidTableName, len(s), MinTableNameLen, MaxTableNameLen)
	}
	if i := invalidChar(s); i >= 0 {
		return fmt.Errorf("table name %q: %w: byte %d (%q) is not one of [A-Za-z0-9_.-]", s, ErrInvalidTableName, i, s[i])
	}
	return nil
}

// invalidChar returns the index of the first byte of s that may not appear
// in a table name, or -1.
func invalidChar(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-', c == '.':
		default:
			return i
		}
	}
	return -1
}
