package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/tenant"
)

// Options configure a Pipeline.
type Options struct {
	// TenantDirectory is the registry of tenants and their API keys, with
	// its cache of keys (tenant.Options.KeyCache), that authenticates
	// writes. Required.
	TenantDirectory *tenant.Directory
	// Limits keeps the tenants' write rates and concurrent writes; nil
	// means none.
	Limits *admission.Tenants
	// BodyBudget is the budget of the bytes of the bodies Write.Run
	// reads (the HTTP server's request bodies); nil means none.
	BodyBudget *admission.Budget
	// MaxBodyBytes bounds a body Write.Run reads; more is a
	// *BodyTooLargeError. Zero means no bound.
	MaxBodyBytes int64
	// EventBudget is the budget of decoded events every protocol's
	// writes hold while they are served. Required.
	EventBudget *admission.Budget
	// CPU, when set, is the pool of slots for heavy CPU work: a write
	// takes a slot for its decoding and another for its write
	// (admission.CPU.AcquireFor). Nil means none.
	CPU *admission.CPU
	// MaxEvents bounds the events of one write; more is a
	// *TooManyEventsError. Zero means no bound.
	MaxEvents int
	// Wait is how long a write of mode Refuse waits for room in the
	// events budget or for a turn among its tenant's writes.
	Wait time.Duration
}

// Pipeline is the write pipeline over one engine. Its methods may be
// called from any number of goroutines at once.
type Pipeline struct {
	db   *engine.DB
	opts Options
}

// New returns the pipeline of writes to db.
func New(db *engine.DB, opts Options) (*Pipeline, error) {
	if opts.TenantDirectory == nil || opts.EventBudget == nil {
		return nil, errors.New("timetable: ingest: TenantDirectory and EventBudget are required")
	}
	return &Pipeline{db: db, opts: opts}, nil
}

// Authenticate returns the key whose secret a request carries (its
// tenant, its scope), from the registry's key cache, or the registry's
// error (tenant.ErrUnknownKey and the like); the key's tenant counts as
// active for the CPU pool. It is the first stage of a write, and the
// server's authentication of its reads as well.
func (p *Pipeline) Authenticate(ctx context.Context, secret string) (tenant.Key, error) {
	k, err := p.opts.TenantDirectory.Authenticate(ctx, secret)
	if err != nil {
		return tenant.Key{}, err
	}
	p.opts.CPU.Seen(k.Tenant)
	return k, nil
}

// Mode says what a stage of a write that finds no room does (see the
// package documentation).
type Mode int

const (
	// Refuse waits up to Options.Wait for room or a turn, then refuses;
	// the tenant's rates refuse at once.
	Refuse Mode = iota
	// Wait waits for room, turns and rates until the context ends.
	Wait
	// Try takes room only when it is free now, and refuses otherwise.
	Try
)

// TooManyEventsError is a write of more events than Options.MaxEvents.
type TooManyEventsError struct {
	Events, Max int
}

func (e *TooManyEventsError) Error() string {
	return fmt.Sprintf("timetable: %d events in one write, over the limit of %d (max_events)", e.Events, e.Max)
}
