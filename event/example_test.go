package event_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/timetabledb/timetable/event"
)

func Example() {
	now := time.Date(2017, 4, 11, 0, 0, 0, 0, time.UTC)
	body := []byte(`{"time":"2017-04-10T14:00:00.123456+02:00","series":"car-17","fields":{"speed":88.50,"gear":"D"}}
{"time":1491825600123,"series":"car-17","id":"my-own-id","fields":{"speed":8.85e1}}
`)
	events, err := event.DecodeNDJSON(body, event.Limits{}, now)
	if err != nil {
		fmt.Println(err)
		return
	}
	events.AssignIDs("tenant-1", "a_table", event.LatestIDScheme)
	for i := range events.Len() {
		out, _ := events.Event(i).MarshalJSON()
		fmt.Println(string(out))
	}
	// Output:
	// {"time":"2017-04-10T12:00:00.123456Z","series":"car-17","id":"aV7c_FmUaA0","fields":{"gear":"D","speed":88.5}}
	// {"time":"2017-04-10T12:00:00.123Z","series":"car-17","id":"my-own-id","fields":{"speed":88.5}}
}

func ExampleDecodeJSON_batchError() {
	now := time.Date(2017, 4, 11, 0, 0, 0, 0, time.UTC)
	body := []byte(`[
		{"time": "2017-04-10T12:00:00Z", "fields": {"speed": 88.5}},
		{"tim": "2017-04-10T12:00:00Z"},
		{"time": "2031-01-01T00:00:00Z"},
		{"time": "2017-04-10T12:00:00Z", "fields": {"speed": 1e200}}
	]`)
	_, err := event.DecodeJSON(body, event.Limits{}, now)
	var be *event.BatchError
	if errors.As(err, &be) {
		for _, p := range be.Problems {
			fmt.Printf("event %d: %s\n", p.Index, p.Reason)
		}
	}
	// Output:
	// event 1: unknown key "tim"
	// event 2: time 2031-01-01T00:00:00Z is more than 24h0m0s in the future
	// event 3: fields.speed: number out of DynamoDB's range: magnitude above 9.9999999999999999999999999999999999999E+125
}

func ExampleValidate() {
	now := time.Date(2017, 4, 11, 0, 0, 0, 0, time.UTC)
	e := event.Event{
		Time:   time.Date(2017, 4, 10, 12, 0, 0, 0, time.UTC),
		Series: "car-17",
		Fields: map[string]any{"speed": 88.5, "gear": "D", "doors": 4},
	}
	if err := event.Validate(&e, event.Limits{}, now); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%#v %#v\n", e.Fields["speed"], e.Fields["doors"])

	bad := event.Event{Time: e.Time, Fields: map[string]any{"pk": 1}}
	fmt.Println(event.Validate(&bad, event.Limits{}, now))
	// Output:
	// "88.5" "4"
	// timetable: invalid event: fields: name "pk" is reserved
}
