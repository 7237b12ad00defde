package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/timetabledb/timetable/storage"
)

// batchSize is the most items one BatchWriteItem request takes.
const batchSize = 25

// maxReportedInvalid bounds how many invalid items a WriteError names.
const maxReportedInvalid = 10

// errUnprocessed marks items DynamoDB still left unprocessed after the
// last attempt, or when the context ended.
var errUnprocessed = errors.New("items left unprocessed")

// BatchWrite puts the items into the table in BatchWriteItem requests of 25,
// Options.WriteConcurrency of them in flight. Requests DynamoDB throttles,
// and the items it leaves unprocessed, are sent again with backoff until
// ctx's deadline; when ctx has none, up to Options.MaxAttempts and
// Options.MaxUnprocessedAttempts times. It validates every item first
// (storage.Item.Validate, and distinct keys) and writes nothing when one
// is invalid: the error then wraps storage.ErrInvalid.
//
// On failure it returns a *storage.BatchWriteError whose Unwritten lists
// every item DynamoDB did not acknowledge; the others are durable. Once a
// request fails for good no further request starts. Items still throttled
// or unprocessed when ctx ended, or after the last attempt, are reported
// with an error wrapping storage.ErrThrottled (and ctx's error, when it
// ended). An item reported unwritten may have been written when a
// connection dropped after DynamoDB applied the request; writing it again
// replaces it.
func (s *Store) BatchWrite(ctx context.Context, table string, items []storage.Item) error {
	if err := s.gate.Enter(); err != nil {
		return err
	}
	defer s.gate.Exit()
	if len(items) == 0 {
		return nil
	}
	reqs, err := writeRequests(items)
	if err != nil {
		return &storage.BatchWriteError{Table: table, Unwritten: allIndexes(len(items)), Err: err}
	}
	return s.send(ctx, table, reqs)
}

// BatchDelete deletes the items of the keys in BatchWriteItem requests of
// DeleteRequests, as BatchWrite puts items: 25 a request,
// Options.WriteConcurrency in flight, unprocessed ones sent again. It
// validates every key first and deletes nothing when one is invalid.
func (s *Store) BatchDelete(ctx context.Context, table string, keys []storage.Key) error {
	if err := s.gate.Enter(); err != nil {
		return err
	}
	defer s.gate.Exit()
	if len(keys) == 0 {
		return nil
	}
	reqs := make([]types.WriteRequest, len(keys))
	seen := make(map[storage.Key]int, len(keys))
	for i, k := range keys {
		if err := k.Validate(); err != nil {
			return &storage.BatchWriteError{Table: table, Unwritten: allIndexes(len(keys)), Err: fmt.Errorf("key %d: %w", i, err)}
		}
		if _, dup := seen[k]; dup {
			continue // DynamoDB refuses a key twice in one request: once is enough
		}
		seen[k] = i
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: map[string]types.AttributeValue{
			storage.PKAttr: &types.AttributeValueMemberS{Value: k.PK},
			storage.SKAttr: &types.AttributeValueMemberS{Value: k.SK},
		}}}
	}
	return s.send(ctx, table, reqs)
}

// send sends the requests, those not nil, in BatchWriteItem requests of
// 25, Options.WriteConcurrency of them in flight, and returns a
// *storage.BatchWriteError naming the indexes not acknowledged.
func (s *Store) send(ctx context.Context, table string, reqs []types.WriteRequest) error {

	var (
		mu        sync.Mutex
		unwritten []int
		firstErr  error
		failed    atomic.Bool
	)
	fail := func(idx []int, err error) {
		mu.Lock()
		defer mu.Unlock()
		unwritten = append(unwritten, idx...)
		if firstErr == nil {
			firstErr = err
		}
	}

	chunks := make(chan []int)
	var wg sync.WaitGroup
	var live []int
	for i, r := range reqs {
		if r.PutRequest != nil || r.DeleteRequest != nil {
			live = append(live, i)
		}
	}
	workers := min(s.opts.WriteConcurrency, (len(live)+batchSize-1)/batchSize)
	for range workers {
		wg.Go(func() {
			for idx := range chunks {
				if ctx.Err() != nil || failed.Load() {
					fail(idx, nil)
					continue
				}
				if left, err := s.writeChunk(ctx, table, reqs, idx); err != nil {
					failed.Store(true)
					fail(left, err)
				}
			}
		})
	}
	for lo := 0; lo < len(live); lo += batchSize {
		chunks <- live[lo:min(lo+batchSize, len(live))]
	}
	close(chunks)
	wg.Wait()

	if len(unwritten) == 0 {
		return nil
	}
	slices.Sort(unwritten)
	switch {
	case firstErr != nil:
		// The error of the first request that failed, rather than the
		// context's of those never sent.
	case ctx.Err() != nil:
		firstErr = fmt.Errorf("not sent before the context ended: %w", ctx.Err())
	default:
		firstErr = errors.New("not sent after an earlier request failed")
	}
	return &storage.BatchWriteError{Table: table, Unwritten: unwritten, Err: firstErr}
}

// writeChunk writes the items at indexes idx of reqs, at most 25, in one
// BatchWriteItem request, and re-sends those left unprocessed, with
// backoff: until ctx ends when it has a deadline, at most
// Options.MaxUnprocessedAttempts sends otherwise. On failure it returns
// the indexes of the items not acknowledged.
func (s *Store) writeChunk(ctx context.Context, table string, reqs []types.WriteRequest, idx []int) ([]int, error) {
	pending := idx
	for attempt := 0; ; attempt++ {
		batch := make([]types.WriteRequest, len(pending))
		for i, p := range pending {
			batch[i] = reqs[p]
		}
		out, err := s.client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
			RequestItems:           map[string][]types.WriteRequest{table: batch},
			ReturnConsumedCapacity: returnCapacity,
		}, s.callOpts...)
		if err != nil {
			err = mapError(opOther, err)
			if attempt > 0 && ctx.Err() != nil && !errors.Is(err, storage.ErrThrottled) {
				// The context ended while items DynamoDB held back
				// were being sent again.
				return pending, fmt.Errorf("batch write: %w: %w: %d items after %d attempts, when the context ended: %w",
					storage.ErrThrottled, errUnprocessed, len(pending), attempt+1, err)
			}
			return pending, fmt.Errorf("batch write: %w", err)
		}
		left, err := unprocessedIndexes(out.UnprocessedItems[table], reqs, pending)
		if err != nil {
			return pending, fmt.Errorf("batch write: %w", err)
		}
		if len(left) == 0 {
			return nil, nil
		}
		s.metrics.unprocessed.WithLabelValues(table).Add(float64(len(left)))
		pending = left
		if _, deadline := ctx.Deadline(); !deadline && attempt+1 >= s.opts.MaxUnprocessedAttempts {
			return pending, fmt.Errorf("batch write: %w: %w: %d items after %d attempts",
				storage.ErrThrottled, errUnprocessed, len(pending), attempt+1)
		}
		if err := s.unprocessed.sleep(ctx, attempt); err != nil {
			return pending, fmt.Errorf("batch write: %w: %w: %d items after %d attempts, when the context ended: %w",
				storage.ErrThrottled, errUnprocessed, len(pending), attempt+1, err)
		}
	}
}

// unprocessedIndexes matches the unprocessed requests DynamoDB returned to
// the indexes of the items sent. A request it cannot match is an error, so
// that no item is ever taken for written on a misunderstanding.
func unprocessedIndexes(left []types.WriteRequest, reqs []types.WriteRequest, sent []int) ([]int, error) {
	if len(left) == 0 {
		return nil, nil
	}
	byKey := make(map[[2]string]int, len(sent))
	for _, i := range sent {
		k, _ := requestKey(reqs[i])
		byKey[k] = i
	}
	out := make([]int, 0, len(left))
	for _, r := range left {
		k, ok := requestKey(r)
		i, found := byKey[k]
		if !ok || !found {
			return nil, fmt.Errorf("unprocessed item %q/%q was not sent", k[0], k[1])
		}
		delete(byKey, k)
		out = append(out, i)
	}
	return out, nil
}

// requestKey returns the key of the item a put or delete request names.
func requestKey(r types.WriteRequest) ([2]string, bool) {
	switch {
	case r.PutRequest != nil:
		return itemKey(r.PutRequest.Item)
	case r.DeleteRequest != nil:
		return itemKey(r.DeleteRequest.Key)
	}
	return [2]string{}, false
}

// writeRequests validates the items and converts them to put requests. It
// names up to maxReportedInvalid invalid items.
func writeRequests(items []storage.Item) ([]types.WriteRequest, error) {
	reqs := make([]types.WriteRequest, len(items))
	seen := make(map[[2]string]int, len(items))
	var errs []error
	invalid := 0
	report := func(err error) {
		invalid++
		if invalid <= maxReportedInvalid {
			errs = append(errs, err)
		}
	}
	for i, it := range items {
		if err := it.Valid(); err != nil {
			report(fmt.Errorf("item %d: %w", i, err))
			continue
		}
		k := [2]string{it.PK, it.SK}
		if j, dup := seen[k]; dup {
			report(fmt.Errorf("%w: item %d: same key as item %d", storage.ErrInvalid, i, j))
			continue
		}
		seen[k] = i
		av, err := marshalItem(it)
		if err != nil {
			report(fmt.Errorf("item %d: %w", i, err))
			continue
		}
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: av}}
	}
	if invalid > maxReportedInvalid {
		errs = append(errs, fmt.Errorf("and %d more invalid items", invalid-maxReportedInvalid))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return reqs, nil
}

// allIndexes returns 0, 1, ..., n-1.
func allIndexes(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}
