package pebblestore

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

// sampleAttrs holds every attribute type, nested.
func sampleAttrs() map[string]any {
	return map[string]any{
		"null":  nil,
		"t":     true,
		"f":     false,
		"s":     "Grüße 🚗",
		"empty": "",
		"n":     json.Number("-88.5"),
		"b":     []byte{0, 1, 0xff},
		"eb":    []byte{},
		"l":     []any{nil, true, "x", json.Number("1"), []byte{2}, []any{}, map[string]any{}},
		"m":     map[string]any{"": "empty key", "deep": map[string]any{"deeper": []any{json.Number("0.5")}}},
	}
}

func TestCodecRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		attrs map[string]any
	}{
		{"nil", nil},
		{"empty", map[string]any{}},
		{"every type", sampleAttrs()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc, err := appendItem(nil, tc.attrs, false)
			require.NoError(t, err)
			d := decoder{s: string(enc)}
			got, err := d.item()
			require.NoError(t, err)
			want := tc.attrs
			if want == nil {
				want = map[string]any{}
			}
			require.Equal(t, want, got)
		})
	}
}

func TestCodecCanonicalisesNumbers(t *testing.T) {
	enc, err := appendItem(nil, map[string]any{"n": json.Number("1.50"), "l": []any{json.Number("1e3")}}, false)
	require.NoError(t, err)
	d := decoder{s: string(enc)}
	got, err := d.item()
	require.NoError(t, err)
	require.Equal(t, map[string]any{"n": json.Number("1.5"), "l": []any{json.Number("1000")}}, got)
}

func TestCodecProjection(t *testing.T) {
	enc, err := appendItem(nil, sampleAttrs(), false)
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		attrs []string
		want  map[string]any
	}{
		{"none", []string{}, map[string]any{}},
		{"scalars", []string{"n", "s"}, map[string]any{"n": json.Number("-88.5"), "s": "Grüße 🚗"}},
		{"containers", []string{"m", "l"}, map[string]any{"m": sampleAttrs()["m"], "l": sampleAttrs()["l"]}},
		{"missing", []string{"nope", "t"}, map[string]any{"t": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeProjected(enc, tc.attrs)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestCodecRefuses checks what the encoder refuses itself: values no
// storage type stands for, numbers that are not numbers. Everything else
// DynamoDB refuses, storage.Item.Validate refuses before encoding.
func TestCodecRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		attrs map[string]any
	}{
		{"int", map[string]any{"v": 1}},
		{"float64", map[string]any{"v": 1.5}},
		{"string slice", map[string]any{"v": []string{"a"}}},
		{"typed map", map[string]any{"v": map[string]string{"a": "b"}}},
		{"int in a list", map[string]any{"v": []any{"ok", 2}}},
		{"bad number", map[string]any{"v": json.Number("1,5")}},
		{"number too precise", map[string]any{"v": json.Number("1234567890123456789012345678901234567890")}},
		{"bad number in a map", map[string]any{"v": map[string]any{"k": json.Number("x")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := appendItem(nil, tc.attrs, false)
			require.Error(t, err)
		})
	}
}

// TestDecoderDepth checks that the decoder reads the deepest value
// storage.Item.Validate accepts, and refuses one level more as corrupt.
func TestDecoderDepth(t *testing.T) {
	nest := func(lists int) map[string]any {
		v := any("bottom")
		for range lists {
			v = []any{v}
		}
		return map[string]any{"v": v}
	}
	deepest := nest(storage.MaxDepth - 1)
	require.NoError(t, storage.Item{PK: "p", SK: "s", Attrs: deepest}.Validate())
	enc, err := appendItem(nil, deepest, false)
	require.NoError(t, err)
	d := decoder{s: string(enc)}
	got, err := d.item()
	require.NoError(t, err)
	require.Equal(t, deepest, got)

	enc, err = appendItem(nil, nest(storage.MaxDepth), false)
	require.NoError(t, err)
	d = decoder{s: string(enc)}
	_, err = d.item()
	require.ErrorIs(t, err, errCorrupt)
}

// FuzzDecoder checks that no input makes the decoder panic, and that
// whatever it decodes encodes and decodes back to the same attributes.
func FuzzDecoder(f *testing.F) {
	enc, err := appendItem(nil, sampleAttrs(), false)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(enc)
	f.Add([]byte{codecVersion, 0})
	f.Add([]byte{codecVersion, 1, 1, 'a', tagList, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := decoder{s: string(b)}
		attrs, err := d.item()
		if err != nil {
			return
		}
		_, err = decodeProjected(b, []string{"a"})
		require.NoError(t, err, "projection decodes what a full decode does")
		// Re-encoding may refuse what the decoder accepts (an
		// uncanonical number); what it accepts must survive.
		again, err := appendItem(nil, attrs, false)
		if err != nil {
			return
		}
		d = decoder{s: string(again)}
		back, err := d.item()
		require.NoError(t, err)
		require.Equal(t, normaliseNumbers(attrs), back)
	})
}

// normaliseNumbers returns v with its numbers in canonical form, or v as
// it is when a number has none.
func normaliseNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if c, err := storage.CanonicalNumber(string(v)); err == nil {
			return c
		}
		return v
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normaliseNumbers(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = normaliseNumbers(e)
		}
		return out
	default:
		return v
	}
}

// decodeProjected decodes the attributes of enc that attrs names, as an
// iterator with a projection does.
func decodeProjected(enc []byte, attrs []string) (map[string]any, error) {
	b, n, err := appendProjection(nil, string(enc), attrs)
	if err != nil {
		return nil, err
	}
	d := decoder{s: string(b)}
	return d.attributes(n)
}

// TestBatchWriteCanonicalisesCheckedNumbers: a Checked item's numbers are
// stored as they are only when Checked found them all canonical; one
// with a number in another spelling, checked or not, is stored in
// canonical form all the same.
func TestBatchWriteCanonicalisesCheckedNumbers(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, Options{})
	require.NoError(t, s.CreateTable(ctx, testSpec("tbl")))
	canonical, _, err := storage.Item{PK: "p", SK: "a", Attrs: map[string]any{"n": json.Number("1.5"), "l": []any{json.Number("-2")}}}.Checked()
	require.NoError(t, err)
	require.True(t, canonical.NumbersCanonical())
	spelled, _, err := storage.Item{PK: "p", SK: "b", Attrs: map[string]any{"n": json.Number("1.50"), "l": []any{json.Number("-2e0")}}}.Checked()
	require.NoError(t, err)
	require.False(t, spelled.NumbersCanonical())
	unchecked := storage.Item{PK: "p", SK: "c", Attrs: map[string]any{"n": json.Number("15e-1"), "l": []any{json.Number("-2.0")}}}
	require.NoError(t, s.BatchWrite(ctx, "tbl", []storage.Item{canonical, spelled, unchecked}))
	want := map[string]any{"n": json.Number("1.5"), "l": []any{json.Number("-2")}}
	got := scan(t, s, "tbl")
	require.Len(t, got, 3)
	for _, it := range got {
		require.Equal(t, want, it.Attrs, it.SK)
	}
}
