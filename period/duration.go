package period

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var daysWeeks = regexp.MustCompile(`^(\d+)([dw])$`)

// ParseDuration reads a Go duration, or a whole number of days ("90d") or
// weeks ("12w"); "0" is zero. Days and weeks are UTC days of 24 hours, as
// everywhere in this package. It reads the durations of the configuration
// file (retention, grace), of the CLI's flags and of the HTTP API's
// parameters.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if m := daysWeeks.FindStringSubmatch(s); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return 0, fmt.Errorf("duration %q: %w", s, err)
		}
		unit := 24 * time.Hour
		if m[2] == "w" {
			unit *= 7
		}
		return time.Duration(n) * unit, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: use a Go duration like 36h or 15m, or days or weeks like 90d or 12w", s)
	}
	return d, nil
}
