package event

import (
	"fmt"
	"time"

	"github.com/timetabledb/timetable/storage"
)

// Defaults of Limits, documented in the package documentation.
const (
	defaultMaxFields     = 1000
	defaultMaxDepth      = storage.MaxDepth
	defaultMaxFieldName  = 255
	defaultMaxSeries     = 512
	defaultMaxID         = 128
	defaultMaxFutureSkew = 24 * time.Hour
)

// Limits bounds what one event may hold. The zero value is the default
// everywhere; a zero field means that field's default, as listed in the
// package documentation.
type Limits struct {
	// MaxFields is the most top-level fields an event may have.
	MaxFields int
	// MaxDepth is how many levels a field may take, counted as DynamoDB
	// counts them (storage.MaxDepth): a top-level field is level 1 and
	// the members of an object or array one level below it, and an object
	// or array at level MaxDepth is refused even when empty. It may not
	// exceed storage.MaxDepth.
	MaxDepth int
	// MaxFieldName is the longest top-level field name, in bytes.
	MaxFieldName int
	// MaxSeries is the longest series, in bytes.
	MaxSeries int
	// MaxID is the longest client id, in bytes.
	MaxID int
	// MaxFutureSkew is how far past now an event's time may be.
	MaxFutureSkew time.Duration
	// Precision is the unit of times sent as integers; the zero value,
	// PrecisionAuto, reads milliseconds and refuses the ones that can only
	// be seconds. It is a request's choice (precision=s|ms|us|ns) more
	// than a limit, and travels with the limits to the decoders.
	Precision Precision
	// ReceiveTime lets an event leave its time out: it takes now, the
	// time the caller passes in, which stands for when it was received.
	// It is for paths where devices cannot keep a clock (MQTT), and is a
	// request's choice like Precision. Such an event's id holds that
	// time, so the same event received twice is stored twice.
	ReceiveTime bool
}

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	if l.MaxFields == 0 {
		l.MaxFields = defaultMaxFields
	}
	if l.MaxDepth == 0 {
		l.MaxDepth = defaultMaxDepth
	}
	if l.MaxFieldName == 0 {
		l.MaxFieldName = defaultMaxFieldName
	}
	if l.MaxSeries == 0 {
		l.MaxSeries = defaultMaxSeries
	}
	if l.MaxID == 0 {
		l.MaxID = defaultMaxID
	}
	if l.MaxFutureSkew == 0 {
		l.MaxFutureSkew = defaultMaxFutureSkew
	}
	return l
}

// Validate returns an error wrapping ErrInvalidLimits when a field is
// negative or MaxDepth exceeds DynamoDB's storage.MaxDepth.
func (l Limits) Validate() error {
	if !l.Precision.valid() {
		return fmt.Errorf("%w: Precision %d is not a precision", ErrInvalidLimits, l.Precision)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxFields", int64(l.MaxFields)},
		{"MaxDepth", int64(l.MaxDepth)},
		{"MaxFieldName", int64(l.MaxFieldName)},
		{"MaxSeries", int64(l.MaxSeries)},
		{"MaxID", int64(l.MaxID)},
		{"MaxFutureSkew", int64(l.MaxFutureSkew)},
	} {
		if f.v < 0 {
			return fmt.Errorf("%w: %s is negative", ErrInvalidLimits, f.name)
		}
	}
	if l.MaxDepth > storage.MaxDepth {
		return fmt.Errorf("%w: MaxDepth %d exceeds DynamoDB's %d", ErrInvalidLimits, l.MaxDepth, storage.MaxDepth)
	}
	return nil
}
