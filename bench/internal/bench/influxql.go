package bench

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// influxQLPeer is a peer that answers InfluxQL on /query: InfluxDB, and
// timetable.
type influxQLPeer interface {
	// influxQL runs a statement and returns the rows of its one series,
	// times in milliseconds.
	influxQL(ctx context.Context, q string) ([][]any, error)
}

func (p *influxPeer) influxQL(ctx context.Context, q string) ([][]any, error) { return p.query(ctx, q) }

func (t *timetablePeer) influxQL(ctx context.Context, q string) ([][]any, error) {
	return influxQuery(ctx, t.client, http.MethodGet, t.base, t.header, q)
}

// errNotAsked is the answer of a query a peer has no way to be asked:
// its cells of the table stay empty.
var errNotAsked = errors.New("not asked of this peer")

// influxQLHourly is the hourly aggregate of one series over 7 days asked
// in InfluxQL on /query, of the peers that answer it: InfluxDB's own
// aggregate, and timetable's InfluxQL beside its /v1 aggregate.
var influxQLHourly = peerQuery{name: "aggregate by hour, one series, 7 days, InfluxQL on /query", reps: 200,
	run: func(ctx context.Context, p peer, w peerWorkload, rep int) (time.Duration, error) {
		iq, ok := p.(influxQLPeer)
		if !ok {
			return 0, errNotAsked
		}
		s := querySeries(rep)
		begin := time.Now()
		rows, err := iq.influxQL(ctx, influxHourly(seriesName(s), w.start, w.end()))
		took := time.Since(begin)
		if err != nil {
			return 0, err
		}
		got, err := influxBuckets(rows)
		if err != nil {
			return 0, err
		}
		return took, checkBuckets("InfluxQL aggregate of "+seriesName(s), got, w.hourly(s, w.start, w.end()))
	}}
