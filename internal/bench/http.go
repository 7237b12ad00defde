package bench

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/timetabledb/timetable/server"
)

// httpIngest posts NDJSON bodies to a real server on loopback.
func httpIngest(ctx context.Context, dir string, gen *generator, o Options) (float64, error) {
	db, store, clk, err := openEngine(ctx, dir)
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	defer store.Close()
	defer db.Close()
	clk.Set(start.Add(time.Duration(o.Events) * time.Millisecond))
	key, err := db.Tenants().Add(ctx, benchTenant, start)
	if err != nil {
		return 0, err
	}
	handler, err := server.New(db, server.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return 0, err
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()
	var bodies [][]byte
	var idx [][]int
	for from := 0; from < o.Events; from += o.HTTPBatch {
		idx = append(idx, []int{len(bodies), min(o.HTTPBatch, o.Events-from)})
		bodies = append(bodies, ndjson(gen.batch(from, min(o.HTTPBatch, o.Events-from))))
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.Writers * 2}}
	url := srv.URL + "/v1/tables/" + benchTable + "/events"
	took, err := parallel(o.Writers*2, idx, func(b []int) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(bodies[b[0]]))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/x-ndjson")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("HTTP ingest: status %s", resp.Status)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return rate(count(idx), took), nil
}
