package parquetfile

import (
	"bufio"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/timetabledb/timetable/event"
)

// Spool writes a Parquet file of events that come one at a time, with a
// schema learnt from all of them: it keeps them in a temporary file as
// they come, learning their fields, and writes the Parquet file from it
// once the last has come (WriteTo). Memory holds one row group, the
// disk a copy of the events.
type Spool struct {
	opts  Options
	learn *Learner
	f     *os.File
	buf   *bufio.Writer
	enc   *gob.Encoder
	n     int64
}

// spooled is an event as a Spool keeps it.
type spooled struct {
	Tenant, Table string
	Time          time.Time
	Series, ID    string
	Fields        map[string]any
}

// null stands for a null in a spool: gob sends no nil interface.
type null struct{}

func init() {
	// The types a field may hold, beyond gob's own.
	gob.Register(json.Number(""))
	gob.Register([]any(nil))
	gob.Register(map[string]any(nil))
	gob.Register(null{})
}

// toSpool returns v with its nulls, at any depth, as null{}: a copy
// where there is one.
func toSpool(v any) any {
	switch v := v.(type) {
	case nil:
		return null{}
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = toSpool(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = toSpool(e)
		}
		return out
	}
	return v
}

// fromSpool undoes toSpool, in place.
func fromSpool(v any) any {
	switch v := v.(type) {
	case null:
		return nil
	case []any:
		for i, e := range v {
			v[i] = fromSpool(e)
		}
	case map[string]any:
		for k, e := range v {
			v[k] = fromSpool(e)
		}
	}
	return v
}

// NewSpool starts a spool in a new temporary file in dir (os.TempDir
// when empty). Close removes the file.
func NewSpool(dir string, o Options) (*Spool, error) {
	f, err := os.CreateTemp(dir, "timetable-parquet-*.spool")
	if err != nil {
		return nil, fmt.Errorf("parquet: spool: %w", err)
	}
	buf := bufio.NewWriter(f)
	return &Spool{opts: o, learn: NewLearner(o), f: f, buf: buf, enc: gob.NewEncoder(buf)}, nil
}

// Add keeps one event; tenant and table are written only with
// Options.Origin.
func (s *Spool) Add(tenant, table string, e event.Event) error {
	s.learn.Learn(e.Fields)
	fields, _ := toSpool(e.Fields).(map[string]any)
	if err := s.enc.Encode(spooled{tenant, table, e.Time, e.Series, e.ID, fields}); err != nil {
		return fmt.Errorf("parquet: spool event %s: %w", e.ID, err)
	}
	s.n++
	return nil
}

// WriteTo writes the Parquet file of the events added, under the schema
// learnt from all of them, to w, and returns its bytes.
func (s *Spool) WriteTo(w io.Writer) (int64, error) {
	if err := s.buf.Flush(); err != nil {
		return 0, fmt.Errorf("parquet: spool: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("parquet: spool: %w", err)
	}
	cw := &countingWriter{w: w}
	pw := NewWriter(cw, s.learn.Schema())
	dec := gob.NewDecoder(bufio.NewReader(s.f))
	for range s.n {
		var e spooled
		if err := dec.Decode(&e); err != nil {
			return cw.n, fmt.Errorf("parquet: spool: %w", err)
		}
		fields, _ := fromSpool(e.Fields).(map[string]any)
		if err := pw.Write(e.Tenant, e.Table, event.Event{Time: e.Time, Series: e.Series, ID: e.ID, Fields: fields}); err != nil {
			return cw.n, err
		}
	}
	err := pw.Close()
	return cw.n, err
}

// Close removes the spool's file.
func (s *Spool) Close() error {
	if s.f == nil {
		return nil
	}
	f := s.f
	s.f = nil
	return errors.Join(f.Close(), os.Remove(f.Name()))
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
