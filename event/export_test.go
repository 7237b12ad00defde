package event

// What the package's tests use of it that the product does not.

// AssignIDs gives every event without an id its idempotent id under
// scheme s (see Event.AssignID), which Event returns from then on: the
// ids the engine computes event by event (Batch.AssignID), kept, for
// the tests and benchmarks that read them back.
func (b *Batch) AssignIDs(tenant, table string, s IDScheme) {
	if b.ids == nil {
		b.ids = make([]string, b.Len())
	}
	for i := range b.ids {
		b.ids[i] = b.AssignID(i, tenant, table, s)
	}
}
