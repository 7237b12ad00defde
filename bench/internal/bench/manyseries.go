package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/timetabledb/timetable/internal/memtest"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/tenant"
)

// Sizes of the many-series benchmark.
const (
	// manyEventsPerSeries is how many events each of the many series has.
	manyEventsPerSeries = 3
	// heavyAtOnce is how many latest-10 queries of every series run at
	// once while another tenant's latency is measured.
	heavyAtOnce = 4
	// otherTenant owns the series whose latest 10 events are asked for
	// meanwhile, 20 events in each of seriesCount series.
	otherTenant = "other"
)

// ManySeries measures a latest-10 of every series of one logical table
// of o.Series series, through the HTTP server on Pebble: the time it
// takes, the heap it grows the server by, alone and four at once, and
// another tenant's latest-10 p99 while four run, next to the same p99 on
// a quiet server.
func ManySeries(ctx context.Context, o Options, r *Report) error {
	db, store, clk, err := openEngine(ctx, filepath.Join(o.Dir, "many-series"))
	if err != nil {
		return err
	}
	defer store.Close()
	defer db.Close()
	step := time.Hour / time.Duration(o.Series*manyEventsPerSeries)
	end := start.Add(time.Hour)
	clk.Set(end)
	many := newGenerator(start, step)
	many.series = o.Series
	for from := 0; from < o.Series*manyEventsPerSeries; from += 10000 {
		if _, err := db.Write(ctx, benchTenant, benchTable, many.batch(from, min(10000, o.Series*manyEventsPerSeries-from))); err != nil {
			return err
		}
	}
	few := newGenerator(start, time.Hour/(20*seriesCount))
	if _, err := db.Write(ctx, otherTenant, benchTable, few.batch(0, 20*seriesCount)); err != nil {
		return err
	}
	tenants := tenant.New(store, db.Options().Schema.MetaTable, tenant.Options{Clock: db.Options().Clock})
	heavyKey, err := tenants.Add(ctx, benchTenant, start)
	if err != nil {
		return err
	}
	lightKey, err := tenants.Add(ctx, otherTenant, start)
	if err != nil {
		return err
	}
	handler, err := server.New(db, server.Options{TenantDirectory: tenants, Logger: slog.New(slog.DiscardHandler), TenantLimits: benchTenantLimits()})
	if err != nil {
		return err
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: heavyAtOnce + 1}}
	latest10 := func(key, series string) error {
		params := url.Values{"from": {start.Format(time.RFC3339Nano)}, "to": {end.Format(time.RFC3339Nano)}, "order": {"desc"}, "limit": {"10"}}
		if series != "" {
			params.Set("series", series)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v1/tables/"+benchTable+"/events?"+params.Encode(), nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		if _, err := io.Copy(io.Discard, res.Body); err != nil {
			return err
		}
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("latest 10 (series %q): status %s", series, res.Status)
		}
		return nil
	}
	// lightUntil asks for another tenant's latest 10 events, one series
	// after another, until done is closed (or n times when done is nil),
	// and returns the p99 in milliseconds.
	lightUntil := func(done <-chan struct{}, n int) (float64, error) {
		var ds []time.Duration
		for i := 0; ; i++ {
			if done != nil {
				select {
				case <-done:
					slices.Sort(ds)
					return percentile(ds, 99), nil
				default:
				}
			} else if i == n {
				slices.Sort(ds)
				return percentile(ds, 99), nil
			}
			begin := time.Now()
			if err := latest10(lightKey, fmt.Sprintf("dev-%04d", i%seriesCount)); err != nil {
				return 0, err
			}
			ds = append(ds, time.Since(begin))
		}
	}

	quiet, err := lightUntil(nil, 2000)
	if err != nil {
		return err
	}
	var took, grown []float64
	for range o.Runs {
		var d time.Duration
		g, err := peakHeapGrowth(func() error {
			begin := time.Now()
			err := latest10(heavyKey, "")
			d = time.Since(begin)
			return err
		})
		if err != nil {
			return err
		}
		took = append(took, float64(d)/float64(time.Millisecond))
		grown = append(grown, float64(g)/(1<<20))
	}
	slices.Sort(took)
	slices.Sort(grown)
	tookMs, alone := took[len(took)/2], grown[len(grown)/2]
	o.Progress(fmt.Sprintf("latest 10 of %d series: %.0f ms, heap grown %.0f MiB", o.Series, tookMs, alone))

	var busy float64
	together, err := peakHeapGrowth(func() error {
		done := make(chan struct{})
		var wg sync.WaitGroup
		var failed atomic.Pointer[error]
		for range heavyAtOnce {
			wg.Go(func() {
				for range o.Runs {
					if err := latest10(heavyKey, ""); err != nil {
						failed.Store(&err)
						return
					}
				}
			})
		}
		go func() {
			wg.Wait()
			close(done)
		}()
		var err error
		busy, err = lightUntil(done, 0)
		<-done
		if p := failed.Load(); p != nil {
			return *p
		}
		return err
	})
	if err != nil {
		return err
	}
	o.Progress(fmt.Sprintf("%d at once: heap grown %.0f MiB; other tenant's latest-10 p99 %.3f ms (quiet %.3f ms)", heavyAtOnce, float64(together)/(1<<20), busy, quiet))
	name := fmt.Sprintf("latest-10 of every series, %d series (Pebble, HTTP)", o.Series)
	r.Rows = append(r.Rows,
		Row{Figure: name, Value: tookMs, Unit: "ms", Aim: "-"},
		Row{Figure: name + ", heap grown", Value: alone, Unit: "MiB", Aim: "<= 256 MiB"},
		Row{Figure: fmt.Sprintf("same, %d at once, heap grown", heavyAtOnce), Value: float64(together) / (1 << 20), Unit: "MiB", Aim: "-"},
		Row{Figure: "other tenant's latest-10 p99 meanwhile", Value: busy, Unit: "ms", Baseline: "same on a quiet server", Base: quiet, Aim: "< 10 ms"})
	return nil
}

// peakHeapGrowth runs f and returns how far the heap grew while it ran,
// at its highest, above the heap after a collection before it.
func peakHeapGrowth(f func() error) (uint64, error) {
	runtime.GC()
	base := memtest.Heap(memtest.HeapObjects)
	sample := memtest.SampleHeap(2*time.Millisecond, memtest.HeapObjects)
	err := f()
	if p := sample()[0]; p > base {
		return p - base, err
	}
	return 0, err
}
