package mqttsub

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/ingest"
	"github.com/timetabledb/timetable/storage"
)

// inbound is a message as the client received it.
type inbound struct {
	msg      mqtt.Message
	received time.Time
}

// message is a message of a batch on its way: its parts, or why it is
// invalid.
type message struct {
	inbound
	parts   []part
	invalid string
	// oversize is a payload over Options.MaxPayloadBytes, dead-lettered
	// without it.
	oversize bool
	// refused says the message is valid but set aside by the engine's
	// table budget, for the reason invalid gives.
	refused bool
	// in is the message's write through the pipeline: what its events
	// hold of the events budget.
	in *ingest.Write
}

// receive hands a message from the client to the writer. The client
// calls it for one message at a time, so it holds the next ones back
// while the writer has no room.
func (s *subscription) receive(_ mqtt.Client, m mqtt.Message) {
	s.metrics.received.Inc()
	select {
	case s.in <- inbound{msg: m, received: s.clock.Now()}:
	case <-s.stop:
		// Not acknowledged: the broker sends it again on the next
		// connection.
	}
}

// run writes the messages that arrive, a batch at a time, until ctx
// ends.
func (s *subscription) run(ctx context.Context) {
	var left []inbound
	for {
		batch := left
		if len(batch) == 0 {
			select {
			case <-ctx.Done():
				return
			case in := <-s.in:
				batch = append(batch, in)
			}
		}
	more:
		for len(batch) < s.opts.MaxBatch {
			select {
			case in := <-s.in:
				batch = append(batch, in)
			default:
				break more
			}
		}
		left = s.handle(ctx, batch)
	}
}

// handle writes a batch and acknowledges its messages, in the order they
// came: the valid ones once every event is durable, the invalid ones once
// dead-lettered. When ctx ends first, it acknowledges nothing. It returns
// the messages of the batch it left for the next: those the events
// budget had no room for once the first ones took theirs.
func (s *subscription) handle(ctx context.Context, batch []inbound) (left []inbound) {
	msgs := make([]*message, 0, len(batch))
	defer func() {
		for _, m := range msgs {
			m.in.Done()
		}
	}()
	for i, in := range batch {
		// The first message of a batch waits for room as long as it
		// takes; a later one takes only what is free.
		mode := ingest.Try
		if i == 0 {
			mode = ingest.Wait
		}
		m := &message{inbound: in, in: s.ingest.WriteAs(s.cfg.Tenant, mode)}
		msgs = append(msgs, m)
		if !s.decodeWithin(ctx, m) {
			m.in.Done()
			msgs = msgs[:len(msgs)-1]
			if ctx.Err() != nil {
				return nil
			}
			left = batch[i:]
			break
		}
	}
	s.check(msgs)
	if !s.write(ctx, msgs) {
		return nil
	}
	for _, m := range msgs {
		if m.invalid != "" {
			if !s.deadLetter(m) {
				continue
			}
			if m.refused {
				s.metrics.refused.Inc()
			} else {
				s.metrics.invalid.Inc()
			}
		} else {
			s.metrics.written.Inc()
		}
		m.msg.Ack()
	}
	return left
}

// decodeWithin decodes a message within the per-message limits, the
// events budget and its tenant's write rates, through the write
// pipeline (ingest.Write.Admit): it takes the estimate of the message's
// events before it decodes, trims it to what they take once decoded,
// and takes them from the rates. The first message of a batch waits for
// room and rates as long as it takes (the subscription reads nothing
// more meanwhile); a later one does not wait, since the batch's own
// messages may hold the room: decodeWithin reports false for it, and
// the batch goes without it. It reports false for the first only once
// ctx ended. A message over the limits, or whose events are estimated
// at more than the whole budget, is invalid: no wait lets it in.
func (s *subscription) decodeWithin(ctx context.Context, m *message) bool {
	payload := m.msg.Payload()
	if int64(len(payload)) > s.opts.MaxPayloadBytes {
		m.invalid = fmt.Sprintf("payload of %d bytes, over the limit of %d bytes (max_body_bytes): split the message", len(payload), s.opts.MaxPayloadBytes)
		m.oversize = true
		return true
	}
	dec := &payloadDecoder{s: s, topic: m.msg.Topic(), received: m.received}
	_, err := m.in.Admit(ctx, payload, dec)
	var many *ingest.TooManyEventsError
	var limited *admission.LimitError
	switch {
	case err == nil:
		m.parts = dec.parts
	case ctx.Err() != nil:
		return false
	case errors.As(err, &many):
		m.invalid = fmt.Sprintf("%d events in one message, over the limit of %d (max_events): split the message", many.Events, many.Max)
	case errors.Is(err, admission.ErrTooLarge):
		m.invalid = fmt.Sprintf("%v: split the message", err)
	case errors.Is(err, admission.ErrFull), errors.Is(err, admission.ErrTenantShare), errors.As(err, &limited):
		// No room, or no rate, now: the message waits for the next
		// batch, whose first it is.
		return false
	default:
		m.invalid = err.Error() // it does not decode
	}
	return true
}

// group is the events of a batch's valid messages for one logical
// table, written in one call.
type group struct {
	table  string
	events event.Batch
	// segments say which message each run of events comes from.
	segments []segment
}

// segment is the events of one message's part within a group:
// events[start:end].
type segment struct {
	msg        *message
	part       part
	start, end int
}

// groups joins the parts of the valid messages by table.
func groups(msgs []*message) []*group {
	var out []*group
	byTable := map[string]*group{}
	batches := map[*group][]event.Batch{}
	for _, m := range msgs {
		if m.invalid != "" {
			continue
		}
		for _, p := range m.parts {
			g := byTable[p.table]
			if g == nil {
				g = &group{table: p.table}
				byTable[p.table] = g
				out = append(out, g)
			}
			start := 0
			if n := len(g.segments); n > 0 {
				start = g.segments[n-1].end
			}
			g.segments = append(g.segments, segment{msg: m, part: p, start: start, end: start + p.events.Len()})
			batches[g] = append(batches[g], p.events)
		}
	}
	for _, g := range out {
		g.events = event.Join(batches[g]...)
	}
	return out
}

// check finds the messages holding events the engine would refuse, and
// marks them invalid.
func (s *subscription) check(msgs []*message) {
	in := s.ingest.WriteAs(s.cfg.Tenant, ingest.Wait)
	defer in.Done()
	for {
		gs := groups(msgs)
		refused := false
		for i, err := range in.Check(tablesOf(gs)) {
			g := gs[i]
			if err == nil {
				continue
			}
			refused = true
			var be *event.BatchError
			if !errors.As(err, &be) || len(be.Problems) == 0 {
				g.refuse(err.Error())
				continue
			}
			for _, p := range be.Problems {
				for _, seg := range g.segments {
					if p.Index >= seg.start && p.Index < seg.end && seg.msg.invalid == "" {
						seg.msg.invalid = fmt.Sprintf("table %s, %s: %s", g.table, seg.part.where(p.Index-seg.start), p.Reason)
					}
				}
			}
		}
		if !refused {
			return
		}
	}
}

// refuse marks every message of the group invalid for reason.
func (g *group) refuse(reason string) {
	for _, seg := range g.segments {
		if seg.msg.invalid == "" {
			seg.msg.invalid = reason
		}
	}
}

// write stores the events of the valid messages, and reports whether
// each is durable or set aside: false only when ctx ended first. The
// messages are one write (engine.DB.WriteTables), tried again with
// backoff while the store fails; a refusal no retry cures sets messages
// aside, to be dead-lettered, and the others are written without them.
// A table whose events the engine refuses sets its messages aside. A
// refusal of the table budget (too many new tables for one request, the
// tenant's new tables of the hour spent, the account's tables near its
// quota) concerns the write as a whole: the messages are written again
// one by one, and those the budget refuses alone are set aside with its
// reason.
func (s *subscription) write(ctx context.Context, msgs []*message) bool {
	for {
		gs := groups(msgs)
		if len(gs) == 0 {
			return true
		}
		gs, err := s.writeSpan(ctx, gs)
		var te *engine.TableError
		switch {
		case err == nil:
			return true
		case ctx.Err() != nil:
			return false
		case overBudget(err):
			valid := slices.DeleteFunc(slices.Clone(msgs), func(m *message) bool { return m.invalid != "" })
			if len(valid) == 1 {
				valid[0].invalid, valid[0].refused = budgetReason(err), true
				return true
			}
			for _, m := range valid {
				if !s.write(ctx, []*message{m}) {
					return false
				}
			}
			return true
		case errors.As(err, &te):
			gs[te.Index].refuse(err.Error())
		default:
			// Items the store refused.
			refused := gs
			var we *engine.WriteError
			if errors.As(err, &we) && len(unwritten(gs, we.Unwritten)) > 0 {
				refused = unwritten(gs, we.Unwritten)
			}
			for _, g := range refused {
				g.refuse(err.Error())
			}
		}
	}
}

// writeSpan writes the groups as one request, trying again with
// backoff while the store fails, and after a failure that wrote some of
// the groups, only the others. It returns the groups of its last try
// and nil once every event is durable, the engine's refusal of that try
// (invalid or overBudget), or ctx's error.
func (s *subscription) writeSpan(ctx context.Context, gs []*group) ([]*group, error) {
	wait := s.opts.RetryMin
	in := s.ingest.WriteAs(s.cfg.Tenant, ingest.Wait)
	defer in.Done()
	for {
		// A slot of the CPU pool, the tenant active for it while it
		// writes: the others' heavy work leaves it a core.
		n, err := in.Store(ctx, tablesOf(gs))
		s.metrics.events.Add(float64(n))
		switch {
		case err == nil:
			return gs, nil
		case ctx.Err() != nil:
			return gs, ctx.Err()
		case errors.Is(err, event.ErrInvalidEvent), errors.Is(err, storage.ErrInvalid), errors.Is(err, engine.ErrBadTableName), overBudget(err):
			return gs, err
		}
		s.metrics.writeFailures.Inc()
		s.log.Warn("mqtt: write failed; its messages stay unacknowledged and the write is tried again", "tables", len(gs), "events", eventsOf(gs), "retry_in", wait, "error", err)
		var we *engine.WriteError
		if errors.As(err, &we) {
			gs = unwritten(gs, we.Unwritten)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return gs, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, s.opts.RetryMax)
	}
}

// overBudget reports a refusal of the engine's table budget: the write
// as a whole needs more new tables than it may make.
func overBudget(err error) bool {
	return errors.Is(err, engine.ErrTooManyNewTables) || errors.Is(err, engine.ErrTableRate) || errors.Is(err, engine.ErrNearTableQuota)
}

// budgetReason is the dead letter's reason for a message the table
// budget refuses.
func budgetReason(err error) string {
	var re *engine.TableRateError
	if errors.As(err, &re) {
		return fmt.Sprintf("%v; the tenant may make new tables again in %v: publish the message again then", err, re.RetryAfter)
	}
	return err.Error()
}

// tablesOf returns the events of each group, for one write.
func tablesOf(gs []*group) []engine.TableEvents {
	tables := make([]engine.TableEvents, len(gs))
	for i, g := range gs {
		tables[i] = engine.TableEvents{Table: g.table, Events: g.events}
	}
	return tables
}

// eventsOf counts the events of groups.
func eventsOf(gs []*group) int {
	n := 0
	for _, g := range gs {
		n += g.events.Len()
	}
	return n
}

// unwritten returns the groups holding any of the events index names,
// indexes of the groups' events taken in order (engine.WriteError).
func unwritten(gs []*group, index []int) []*group {
	var out []*group
	base := 0
	for _, g := range gs {
		end := base + g.events.Len()
		if i, _ := slices.BinarySearch(index, base); i < len(index) && index[i] < end {
			out = append(out, g)
		}
		base = end
	}
	return out
}

// deadLetter logs an invalid or refused message and publishes it to the
// dead-letter topic, if any. It reports whether the message may be acknowledged:
// false when the broker did not take the dead letter.
func (s *subscription) deadLetter(m *message) bool {
	what := "mqtt: invalid message"
	if m.refused {
		what = "mqtt: message refused by the table budget"
	}
	s.log.Warn(what, "topic", m.msg.Topic(), "reason", m.invalid, "dead_letter", s.cfg.DeadLetter)
	if s.cfg.DeadLetter == "" {
		return true
	}
	letter := deadLetter{Topic: m.msg.Topic(), Reason: m.invalid, Received: m.received.UTC().Format(time.RFC3339Nano)}
	if p := m.msg.Payload(); m.oversize {
		letter.PayloadBytes = len(p)
	} else if utf8.Valid(p) {
		letter.Payload = string(p)
	} else {
		letter.PayloadBase64 = base64.StdEncoding.EncodeToString(p)
	}
	body, err := json.Marshal(letter)
	if err != nil {
		panic(fmt.Sprintf("mqtt: encode a dead letter: %v", err)) // strings only: it encodes
	}
	tok := s.client.Publish(s.cfg.DeadLetter, 1, false, body)
	if !tok.WaitTimeout(s.opts.PublishTimeout) {
		err = fmt.Errorf("no answer from the broker within %v", s.opts.PublishTimeout)
	} else {
		err = tok.Error()
	}
	if err != nil {
		s.metrics.deadLetterFailures.Inc()
		s.log.Error("mqtt: dead letter not published; the message stays unacknowledged", "topic", m.msg.Topic(), "dead_letter", s.cfg.DeadLetter, "error", err)
		return false
	}
	return true
}

// deadLetter is what the dead-letter topic receives of an invalid
// message.
type deadLetter struct {
	Topic         string `json:"topic"`
	Reason        string `json:"reason"`
	Received      string `json:"received"`
	Payload       string `json:"payload,omitempty"`
	PayloadBase64 string `json:"payload_base64,omitempty"`
	// PayloadBytes is the size of a payload over the limit, which the
	// letter leaves out.
	PayloadBytes int `json:"payload_bytes,omitempty"`
}
