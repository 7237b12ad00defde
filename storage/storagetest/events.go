package storagetest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// FillEvents makes table, a week of family "events" (April 9, 2017), and
// writes n items to it shaped like timetable's events of the AWS
// developer guide's example, about 180 bytes each (a car's speed, gear,
// position and driver), in batches of 2,000. The archive's memory tests
// and make bench's archive part measure with them.
func FillEvents(ctx context.Context, s storage.Store, table string, n int) error {
	err := s.CreateTable(ctx, storage.TableSpec{Name: table, Capacity: storage.Capacity{Billing: storage.OnDemand},
		Tags: map[string]string{family.TagFamily: "events", family.TagPeriodStart: "2017-04-09T00:00:00Z", family.TagPeriodEnd: "2017-04-16T00:00:00Z"}})
	if err != nil {
		return err
	}
	batch := make([]storage.Item, 0, 2000)
	for i := range n {
		batch = append(batch, storage.Item{
			PK: fmt.Sprintf("acme#cars#car-%d#%d", i%5000, i%4),
			SK: fmt.Sprintf("2017-04-10T%02d:%02d:%02d.%09dZ#e%08x", i/3600000%24, i/60000%60, i/1000%60, i%1000*1000000, i),
			Attrs: map[string]any{
				"speed": json.Number(fmt.Sprint(i % 200)), "gear": "D", "lat": json.Number("47.3769"), "lon": json.Number("8.5417"),
				"driver": fmt.Sprintf("driver-%d", i%313), "ok": i%3 == 0,
			},
		})
		if len(batch) == cap(batch) || i == n-1 {
			if err := s.BatchWrite(ctx, table, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	return nil
}
