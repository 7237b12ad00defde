package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/ingest"
)

// What a write request holds while it is served, and what its tenant may
// ask, are decided by the write pipeline (package ingest, whose
// documentation gives the order of its stages) over package admission's
// budgets and limits; the server hands it the body's reader and the
// protocol's decoder (ingest.Write.Run) and turns the pipeline's
// refusals into answers:
//
//   - its body, in the body budget (body.go, ingest.Write.Run);
//   - its decoded events, in the events budget (Options.
//     MaxEventBytesInFlight), shared with the MQTT subscriber when the
//     caller passes one budget to both (Options.EventBudget): an
//     estimate of their memory before they are decoded, trimmed to what
//     they take once decoded, given back once written;
//   - one tenant holds at most Options.TenantShare of either budget while
//     others are served;
//   - its tenant's write rates, events and bytes a second, and its
//     concurrent writes (tenant.Limits), and for a query its tenant's
//     concurrent queries.
//
// A full budget is 503, a tenant over its share or a limit 429, both
// with Retry-After.

// budgetError turns a Budget's refusal into the answer: 413 for a
// request larger than the budget, which no wait lets in; ctx's own
// error when the request ended; else 503 for a full budget and 429 for
// a tenant over its share.
func budgetError(ctx context.Context, err error) error {
	if errors.Is(err, admission.ErrTooLarge) {
		return &httpError{status: http.StatusRequestEntityTooLarge, msg: err.Error() + ": split the batch"}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, admission.ErrTenantShare) {
		return &httpError{status: http.StatusTooManyRequests, msg: err.Error() + ": retry the request", retryAfter: time.Second}
	}
	return &httpError{status: http.StatusServiceUnavailable, msg: err.Error() + ": retry the request"}
}

// admissionAnswer turns the write pipeline's refusal into the answer
// (ingest.Write.Run's turn, budgets and rates): a budget's as budgetError, a tenant
// limit's as limitAnswer; any other error is returned as it is.
func (s *Server) admissionAnswer(ctx context.Context, tenant string, err error) error {
	if errors.Is(err, admission.ErrTooLarge) || errors.Is(err, admission.ErrFull) || errors.Is(err, admission.ErrTenantShare) {
		return budgetError(ctx, err)
	}
	return s.limitAnswer(tenant, err)
}

// limitAnswer turns a tenant limit's refusal into the answer: 429 with
// Retry-After, or 413 for a request larger than a burst.
func (s *Server) limitAnswer(tenant string, err error) error {
	var le *admission.LimitError
	if errors.As(err, &le) {
		s.metrics.limited.WithLabelValues(le.Limit, s.tenantLabel(tenant)).Inc()
		if le.Never {
			return &httpError{status: http.StatusRequestEntityTooLarge, msg: err.Error()}
		}
		return &httpError{status: http.StatusTooManyRequests, msg: fmt.Sprintf("timetable: tenant %s: %v", tenant, err), retryAfter: le.RetryAfter}
	}
	return err
}

// startQuery counts a query among its tenant's concurrent queries, or
// answers 429.
func (s *Server) startQuery(ctx context.Context, tenant string) (func(), error) {
	done, err := s.tenants.StartQuery(ctx, tenant)
	var le *admission.LimitError
	if errors.As(err, &le) {
		s.metrics.limited.WithLabelValues(le.Limit, s.tenantLabel(tenant)).Inc()
		return nil, &httpError{status: http.StatusTooManyRequests, msg: fmt.Sprintf("timetable: tenant %s: %v", tenant, err), retryAfter: le.RetryAfter}
	}
	return done, err
}

// writeEndpoint is the body of a write handler: it runs the write in
// through the pipeline with its protocol's decoder and writes its
// answer, or returns an error for the server to answer with.
type writeEndpoint func(w http.ResponseWriter, r *http.Request, in *ingest.Write) error

// writing answers a write whose API key keyOf finds in the request,
// through the write pipeline (package ingest) in its mode Refuse: the
// key authenticated (401, 403 for a read-only key), then ep checks the
// request's parameters and runs the write through the pipeline
// (ingest.Write.Run) with its protocol's decoder: a turn among its
// tenant's write requests at work (tenant.Limits.MaxConcurrentWrites),
// waiting up to Options.BodyBudgetWait before its body is read, then 429
// naming max_concurrent_writes (the requests waiting are parked, not
// running: one tenant's many writers leave the CPU to the others), its
// body read, admitted, decoded and stored. A write refused with 429 or
// 503 has the rest of its body thrown away before the answer
// (discardBody), so that its client reads it.
func (s *Server) writing(keyOf keySource, ep writeEndpoint) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.write(w, r, keyOf, ep); err != nil {
			s.fail(w, r, err)
		}
	})
}

// write is writing's handler, returning the error to answer with.
func (s *Server) write(w http.ResponseWriter, r *http.Request, keyOf keySource, ep writeEndpoint) error {
	k, secret, err := s.authenticate(r, keyOf, writeAccess)
	if err != nil {
		return err
	}
	in := s.ingest.Write(k.Tenant, secret, ingest.Refuse)
	defer in.Done()
	err = ep(w, r, in)
	in.Done() // neither the turn nor the events are held while a refused body is thrown away
	if retryable(err) {
		s.discardBody(w, r, bodyStarted(err))
	}
	return err
}

// retryable reports whether err answers 429 or 503: a refusal the same
// request may get past later, whose client must read the answer's
// Retry-After.
func retryable(err error) bool {
	if err == nil {
		return false
	}
	code := status(err)
	return code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable
}

// counted runs a query endpoint among its tenant's concurrent queries,
// its reads of every series within its tenant's query partitions.
func (s *Server) counted(ep endpoint) endpoint {
	return func(w http.ResponseWriter, r *http.Request, tenant string) error {
		done, err := s.startQuery(r.Context(), tenant)
		if err != nil {
			return err
		}
		defer done()
		return s.partitioned(ep)(w, r, tenant)
	}
}

// partitioned runs a query endpoint with its reads of every series
// holding at most its tenant's query partitions of the engine's query
// budget (engine.WithTenantQueryPartitions): the smaller of the tenant's
// max_query_partitions and its TenantShare of the budget. A read over
// them, once it has waited, is 429 naming max_query_partitions. Its
// aggregates of every series take slots of the server's CPU pool
// (Options.CPU, engine.WithCPU). Its reads share one read of each
// family's registry version (engine.WithCatalogSnapshot): an aggregate
// and its gaps, or an InfluxQL request's statements, see one set of
// tables, every table made before the request's first read among them.
func (s *Server) partitioned(ep endpoint) endpoint {
	return func(w http.ResponseWriter, r *http.Request, tenant string) error {
		ctx := engine.WithCatalogSnapshot(r.Context())
		ctx = engine.WithCPU(engine.WithTenantQueryPartitions(ctx, s.queryPartitionsShare(ctx, tenant)), s.opts.CPU)
		return s.limitAnswer(tenant, ep(w, r.WithContext(ctx), tenant))
	}
}

// queryPartitionsShare is the most partitions of the engine's query
// budget a tenant's reads may hold.
func (s *Server) queryPartitionsShare(ctx context.Context, tenant string) int64 {
	share := int64(math.Ceil(float64(s.db.Options().MaxQueryPartitions) * s.opts.TenantShare))
	if most := int64(s.tenants.Limits(ctx, tenant).MaxQueryPartitions); most > 0 {
		share = min(share, most)
	}
	return share
}

// retryAfterHeader is the Retry-After of a wait: whole seconds, at least
// one (admission.RetrySeconds).
func retryAfterHeader(d time.Duration) string {
	return strconv.FormatInt(admission.RetrySeconds(d), 10)
}
