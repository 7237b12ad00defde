package storage_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/timetabledb/timetable/storage"
)

func ExampleCanonicalNumber() {
	for _, s := range []string{"1.50", "1e3", "-0.0", "12.5e-3", "+1", "1e126"} {
		n, err := storage.CanonicalNumber(s)
		fmt.Printf("%q %v\n", n, err)
	}
	// Output:
	// "1.5" <nil>
	// "1000" <nil>
	// "0" <nil>
	// "0.0125" <nil>
	// "" timetable: invalid item: not a JSON number
	// "" timetable: invalid item: number out of DynamoDB's range: magnitude above 9.9999999999999999999999999999999999999E+125
}

func ExampleItem_Validate() {
	// A value may sit 32 levels deep, counting its attribute as level 1:
	// 31 maps, one inside another, around a number.
	var deep any = json.Number("1")
	for range storage.MaxDepth - 1 {
		deep = map[string]any{"a": deep}
	}
	it := storage.Item{PK: "sensor-1", SK: "2026-11-23T10:00:00Z", Attrs: map[string]any{"reading": deep}}
	fmt.Println(it.Validate())

	// One map more is refused, as DynamoDB refuses it.
	it.Attrs["reading"] = map[string]any{"a": deep}
	err := it.Validate()
	var ie storage.InvalidError
	errors.As(err, &ie)
	fmt.Println(errors.Is(err, storage.ErrInvalid), ie.Reason, "at", strings.Count(ie.Path, ".a"), "maps below the attribute")
	// Output:
	// <nil>
	// true nested deeper than 32 levels at 31 maps below the attribute
}
