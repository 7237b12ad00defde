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
	"github.com/timetabledb/timetable/event"
)

// What a write request holds while it is served, and what its tenant may
// ask, come from package admission:
//
//   - its body, in the body budget (body.go);
//   - its decoded events, in the events budget (Options.
//     MaxEventBytesInFlight), shared with the MQTT subscriber when the
//     caller passes one budget to both (Options.EventBudget). A request
//     takes a conservative estimate of its events' memory before it
//     decodes (admission.BodyBytes, from an upper bound of the events the
//     body holds), and trims it to the estimate of what it decoded
//     (admission.BatchBytes) once decoded; it gives it back once written;
//   - one tenant holds at most Options.TenantShare of either budget while
//     others are served;
//   - its tenant's write rates, events and bytes a second
//     (tenant.Limits), and for a query its tenant's concurrent queries.
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

// holdEvents takes the estimate of a body's events out of the events
// budget, before it is decoded, waiting up to Options.BodyBudgetWait.
// An estimate over the whole budget takes the whole budget: it is an
// upper bound, and what the body decodes to decides (fitEvents) whether
// the request is too large.
func (s *Server) holdEvents(ctx context.Context, tenant string, body []byte, lines bool) (*admission.Hold, error) {
	h := s.events.Hold(tenant)
	if err := s.resizeEvents(ctx, h, s.events.Bound(admission.BodyBytes(int64(len(body)), admission.EventsUpperBound(body, lines)))); err != nil {
		return nil, err
	}
	return h, nil
}

// resizeEvents makes a hold of the events budget n, waiting up to
// Options.BodyBudgetWait.
func (s *Server) resizeEvents(ctx context.Context, h *admission.Hold, n int64) error {
	wctx, cancel := context.WithTimeout(ctx, s.opts.BodyBudgetWait)
	defer cancel()
	if err := h.Resize(wctx, n); err != nil {
		return budgetError(ctx, err)
	}
	return nil
}

// fitEvents trims, or grows, a hold to the estimate of decoded events,
// or answers 413 when that is more than the whole budget.
func (s *Server) fitEvents(ctx context.Context, h *admission.Hold, events ...event.Batch) error {
	var n int64
	for _, b := range events {
		n += admission.BatchBytes(b)
	}
	return s.resizeEvents(ctx, h, n)
}

// checkBytes answers 429 for a body over its tenant's byte rate, taking
// nothing.
func (s *Server) checkBytes(ctx context.Context, tenant string, bytes int64) error {
	return s.limitAnswer(tenant, s.tenants.CheckBytes(ctx, tenant, bytes))
}

// allowWrite takes a write of events and body bytes from its tenant's
// write rates, or answers 429.
func (s *Server) allowWrite(ctx context.Context, tenant string, events int, bytes int64) error {
	return s.limitAnswer(tenant, s.tenants.AllowWrite(ctx, tenant, events, bytes))
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

// writing runs a write endpoint among its tenant's write requests at
// work (tenant.Limits.MaxConcurrentWrites), waiting up to
// Options.BodyBudgetWait for a turn before its body is read, then 429
// naming max_concurrent_writes. The requests waiting are parked, not
// running: one tenant's many writers leave the CPU to the others. A
// write refused with 429 or 503 has the rest of its body thrown away
// before the answer (discardBody), so that its client reads it.
func (s *Server) writing(ep endpoint) endpoint {
	return func(w http.ResponseWriter, r *http.Request, tenant string) error {
		wait, cancel := context.WithTimeout(r.Context(), s.opts.BodyBudgetWait)
		defer cancel()
		done, err := s.tenants.StartWrite(r.Context(), wait, tenant)
		if err != nil {
			err = s.limitAnswer(tenant, err)
			if retryable(err) {
				s.discardBody(w, r, false)
			}
			return err
		}
		defer done()
		err = ep(w, r, tenant)
		done() // the turn is not held while a refused body is thrown away
		if retryable(err) {
			s.discardBody(w, r, bodyStarted(err))
		}
		return err
	}
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
// (Options.CPU, engine.WithCPU).
func (s *Server) partitioned(ep endpoint) endpoint {
	return func(w http.ResponseWriter, r *http.Request, tenant string) error {
		ctx := engine.WithCPU(engine.WithTenantQueryPartitions(r.Context(), s.queryPartitionsShare(r.Context(), tenant)), s.opts.CPU)
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
