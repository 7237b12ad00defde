package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/schollz/progressbar/v3"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/parquetfile"
)

// An export is the answer to a query written to a file (--output) or
// standard output as it comes, page by page: CSV, NDJSON or Parquet hold
// a page at a time, never the answer. Only the table format waits for the
// last page, to align its columns.

// outputFile is the file --output names, written under a temporary name
// in its folder and renamed over it only when the export is complete: a
// query that fails leaves no half-written file.
type outputFile struct {
	f    *os.File
	path string
}

func createOutput(path string) (*outputFile, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, usageErrorf("--output %s: %v", path, err)
	}
	return &outputFile{f: f, path: path}, nil
}

func (o *outputFile) Write(p []byte) (int, error) { return o.f.Write(p) }

// commit makes the file whole under its name.
func (o *outputFile) commit() error {
	if err := errors.Join(o.f.Sync(), o.f.Close()); err != nil {
		os.Remove(o.f.Name())
		return fmt.Errorf("--output %s: %w", o.path, err)
	}
	if err := os.Rename(o.f.Name(), o.path); err != nil {
		os.Remove(o.f.Name())
		return fmt.Errorf("--output %s: %w", o.path, err)
	}
	return nil
}

// discard removes the unfinished file.
func (o *outputFile) discard() {
	o.f.Close()
	os.Remove(o.f.Name())
}

// ndjsonPrinter prints one event a line, in the JSON of the HTTP API.
type ndjsonPrinter struct {
	w   *bufio.Writer
	buf []byte
}

func (p *ndjsonPrinter) add(events []event.Event, _ bool) error {
	for _, e := range events {
		var err error
		if p.buf, err = e.AppendJSON(p.buf[:0]); err != nil {
			return err
		}
		p.buf = append(p.buf, '\n')
		if _, err := p.w.Write(p.buf); err != nil {
			return err
		}
	}
	return nil
}

func (p *ndjsonPrinter) end() error { return nil }

// parquetPrinter writes a Parquet file of the events (package
// parquetfile). It spools the events to a temporary file as they come and
// writes the Parquet file at the end, with a schema learnt from every
// event: every field has its column however late it first comes, and
// every column's type holds every value of it.
type parquetPrinter struct {
	w     io.Writer
	spool *parquetfile.Spool
}

func (p *parquetPrinter) add(events []event.Event, _ bool) error {
	if p.spool == nil {
		s, err := parquetfile.NewSpool("", parquetfile.Options{})
		if err != nil {
			return err
		}
		p.spool = s
	}
	for _, e := range events {
		if err := p.spool.Add("", "", e); err != nil {
			return err
		}
	}
	return nil
}

func (p *parquetPrinter) end() error {
	if p.spool == nil {
		// No event: a file of the columns every file has.
		w := parquetfile.NewWriter(p.w, parquetfile.NewLearner(parquetfile.Options{}).Schema())
		return w.Close()
	}
	_, err := p.spool.WriteTo(p.w)
	return errors.Join(err, p.spool.Close())
}

// discard removes the spool, if any is left.
func (p *parquetPrinter) discard() {
	if p.spool != nil {
		_ = p.spool.Close() // a temporary file
	}
}

// progressPrinter moves a progress bar as its printer gets events.
type progressPrinter struct {
	printer
	bar *progressbar.ProgressBar
}

func (p progressPrinter) add(events []event.Event, last bool) error {
	if err := p.printer.add(events, last); err != nil {
		return err
	}
	return p.bar.Add(len(events))
}

func (p progressPrinter) end() error {
	err := p.printer.end()
	_ = p.bar.Finish()
	return err
}
