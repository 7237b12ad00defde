package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// checkAdminJSON refuses an admin request body that encoding/json would
// take but the event API refuses (package event's decoder): a key twice
// in one object, where encoding/json keeps the last, and anything but
// white space after the value, where a json.Decoder stops reading. The
// body is one JSON value; what fields it may hold is the handler's to
// say.
func checkAdminJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	// keys holds, for each object open, the keys seen; nil for an array.
	var keys []map[string]bool
	// wantKey is whether the next token of the innermost object is a key.
	wantKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				keys = append(keys, map[string]bool{})
				wantKey = true
				continue
			case '[':
				keys = append(keys, nil)
				wantKey = false
				continue
			default: // } or ]
				keys = keys[:len(keys)-1]
			}
		case string:
			if wantKey {
				obj := keys[len(keys)-1]
				if obj[t] {
					return fmt.Errorf("duplicate key %q", t)
				}
				obj[t] = true
				wantKey = false
				continue
			}
		}
		// A value ended: the next token of an object is a key.
		if len(keys) == 0 {
			break
		}
		wantKey = keys[len(keys)-1] != nil
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("data after the JSON value at offset %d", dec.InputOffset())
	}
	return nil
}
