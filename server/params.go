package server

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// checkParams refuses a parameter not among known, and one given twice,
// naming it.
func checkParams(params url.Values, known []string) error {
	for name, vs := range params {
		if !slices.Contains(known, name) {
			return fmt.Errorf("%w: unknown parameter %q; known are %s", ErrBadParameter, name, strings.Join(known, ", "))
		}
		if len(vs) > 1 {
			return fmt.Errorf("%w: %s: given %d times", ErrBadParameter, name, len(vs))
		}
	}
	return nil
}
