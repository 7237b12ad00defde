package mqttsub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/event/lineproto"
)

// part is the events a message holds for one logical table.
type part struct {
	table  string
	events event.Batch
	// lines holds the line of each event, for line protocol.
	lines []int
}

// where names event i of the part in a reason.
func (p part) where(i int) string {
	if p.lines != nil {
		return fmt.Sprintf("line %d", p.lines[i])
	}
	return fmt.Sprintf("event %d", i)
}

// payloadDecoder is the decoder of a message's payload
// (ingest.Decoder), which keeps the parts it decoded for the batch the
// message joins.
type payloadDecoder struct {
	s        *subscription
	topic    string
	received time.Time
	parts    []part
}

func (d *payloadDecoder) Decode(payload []byte) ([]engine.TableEvents, error) {
	parts, err := d.s.decode(d.topic, payload, d.received)
	if err != nil {
		return nil, err
	}
	d.parts = parts
	tables := make([]engine.TableEvents, len(parts))
	for i, p := range parts {
		tables[i] = engine.TableEvents{Table: p.table, Events: p.events}
	}
	return tables, nil
}

func (d *payloadDecoder) Format() admission.Format {
	if d.s.cfg.Format == config.FormatLine {
		return admission.LineProtocol
	}
	return admission.JSON // an array, one event or NDJSON
}

// decode reads a message's payload into its parts, or returns why the
// message is invalid.
func (s *subscription) decode(topic string, payload []byte, received time.Time) ([]part, error) {
	lim := s.limits
	topicSeries, err := s.topicSeries(topic)
	if err != nil {
		return nil, err
	}
	if s.cfg.Format == config.FormatLine {
		tables, err := lineproto.Decode(payload, lineproto.Options{Limits: lim, Now: received, Table: s.cfg.Table, Series: topicSeries})
		if err != nil {
			return nil, err
		}
		parts := make([]part, len(tables))
		for i, t := range tables {
			parts[i] = part{table: t.Name, events: t.Events, lines: t.Lines}
		}
		return parts, nil
	}
	b, err := decodeJSON(payload, lim, received)
	if err != nil {
		return nil, err
	}
	if topicSeries != "" || s.cfg.SeriesField != "" {
		if b, err = s.withSeries(b, topicSeries); err != nil {
			return nil, err
		}
	}
	return []part{{table: s.cfg.Table, events: b}}, nil
}

// decodeJSON reads timetable's JSON events: a payload that parses as one
// JSON value is that value, an event or an array of them; any other is
// NDJSON.
func decodeJSON(payload []byte, lim event.Limits, now time.Time) (event.Batch, error) {
	trimmed := bytes.TrimSpace(payload)
	switch {
	case len(trimmed) == 0:
		return event.Batch{}, errors.New("empty payload")
	case trimmed[0] == '[':
		return event.DecodeJSON(trimmed, lim, now)
	case trimmed[0] == '{':
		one := make([]byte, 0, len(trimmed)+2)
		one = append(append(append(one, '['), trimmed...), ']')
		b, err := event.DecodeJSON(one, lim, now)
		if !errors.Is(err, event.ErrMalformedBody) {
			return b, err
		}
	}
	return event.DecodeNDJSON(payload, lim, now)
}

// topicSeries returns the series the topic names at the subscription's
// level, or "" when the subscription names none.
func (s *subscription) topicSeries(topic string) (string, error) {
	if s.cfg.Series == 0 {
		return "", nil
	}
	levels := strings.Split(topic, "/")
	if s.cfg.Series > len(levels) {
		return "", fmt.Errorf("topic %q has no level %d to name the series", topic, s.cfg.Series)
	}
	series := levels[s.cfg.Series-1]
	if series == "" {
		return "", fmt.Errorf("topic %q: level %d, the series, is empty", topic, s.cfg.Series)
	}
	return series, nil
}

// withSeries gives the events of b the series of their topic level, or
// of their series field, and checks them again. An event that names
// another series is refused, not moved. The events are built one at a
// time, and only to read their series field.
func (s *subscription) withSeries(b event.Batch, topicSeries string) (event.Batch, error) {
	series := make([]string, b.Len())
	for i := range series {
		want := topicSeries
		if want == "" {
			switch v := b.Event(i).Fields[s.cfg.SeriesField].(type) {
			case string:
				want = v
			case json.Number:
				want = string(v)
			case nil:
				return event.Batch{}, fmt.Errorf("event %d: no field %q to name the series", i, s.cfg.SeriesField)
			default:
				return event.Batch{}, fmt.Errorf("event %d: field %q, the series, is not a string or a number", i, s.cfg.SeriesField)
			}
		}
		switch got := b.Series(i); got {
		case "", want:
		default:
			return event.Batch{}, fmt.Errorf("event %d: series %q, but its message names series %q", i, got, want)
		}
		series[i] = want
	}
	return b.WithSeries(s.limits, func(i int) string { return series[i] })
}
