package bench

import (
	"context"
	"time"
)

// A pingedPeer answers a request that asks it for nothing: what that
// takes the benchmark's client is the floor under every query's latency
// over the peer's protocol, its transport and request handling without a
// read.
type pingedPeer interface {
	// ping sends the cheapest request the server answers and waits for
	// the whole answer.
	ping(ctx context.Context) error
	// pingRequest says what ping sends, for the table's notes.
	pingRequest() string
}

// emptyRequest is the floor of each peer's point reads: its cheapest
// request, asked as the point reads are, by the same client.
var emptyRequest = peerQuery{name: "empty request (the floor: see the notes)", reps: 1000,
	run: func(ctx context.Context, p peer, _ peerWorkload, _ int) (time.Duration, error) {
		pp, ok := p.(pingedPeer)
		if !ok {
			return 0, errNotAsked
		}
		begin := time.Now()
		err := pp.ping(ctx)
		return time.Since(begin), err
	}}

// pingNote says what each peer's empty request is.
func pingNote(peers []peer) string {
	note := "empty request:"
	sep := " "
	for _, p := range peers {
		if pp, ok := p.(pingedPeer); ok {
			note += sep + p.name() + " " + pp.pingRequest()
			sep = "; "
		}
	}
	return note
}
