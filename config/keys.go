package config

import (
	"errors"
	"reflect"
	"regexp"
	"strings"
	"sync"
)

// unknownField is the YAML decoder's message for a key that no field of
// the type it decodes into takes.
var unknownField = regexp.MustCompile(`^(line \d+): field (.+) not found in type (.+)$`)

// describeKeys rewrites the decoder's messages of unknown keys, which
// name Go types ("field familes not found in type config.fileConfig"),
// in the file's terms: where the key is and the keys close to it. Other
// errors are returned as they are.
func describeKeys(err error) error {
	msgs := strings.Split(err.Error(), "\n")
	changed := false
	for i, m := range msgs {
		sm := unknownField.FindStringSubmatch(strings.TrimSpace(m))
		if sm == nil {
			continue
		}
		place, ok := fileKeys()[sm[3]]
		if !ok {
			continue
		}
		msg := sm[1] + ": unknown key " + sm[2] + " " + place.where
		if near := nearKeys(sm[2], place.keys); len(near) > 0 {
			msg += ", did you mean " + strings.Join(near, " or ") + "?"
		} else {
			msg += " (its keys: " + strings.Join(place.keys, ", ") + ")"
		}
		msgs[i], changed = msg, true
	}
	if !changed {
		return err
	}
	// The decoder's own first line, "yaml: unmarshal errors:", says
	// nothing of use.
	if len(msgs) > 1 && strings.HasSuffix(msgs[0], "unmarshal errors:") {
		msgs = msgs[1:]
	}
	for i := range msgs {
		msgs[i] = strings.TrimSpace(msgs[i])
	}
	return errors.New(strings.Join(msgs, "; "))
}

// keyPlace is a mapping of the file: where it is, and the keys it takes.
type keyPlace struct {
	where string
	keys  []string
}

// fileKeys maps the type of each mapping of the file, as the decoder
// names it, to its place and keys.
var fileKeys = sync.OnceValue(func() map[string]keyPlace {
	places := map[string]keyPlace{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		if _, seen := places[t.String()]; seen {
			return
		}
		where := "at the top level"
		if path != "" {
			where = "in " + path
		}
		p := keyPlace{where: where}
		places[t.String()] = p
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			p.keys = append(p.keys, name)
			walk(t.Field(i).Type, strings.TrimPrefix(path+"."+name, "."))
		}
		places[t.String()] = p
	}
	walk(reflect.TypeOf(fileConfig{}), "")
	return places
})

// nearKeys returns the keys within two edits of key, or that it starts.
func nearKeys(key string, keys []string) []string {
	var near []string
	for _, k := range keys {
		if editDistance(key, k) <= 2 || (len(key) >= 3 && strings.HasPrefix(k, key)) {
			near = append(near, k)
		}
	}
	return near
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
