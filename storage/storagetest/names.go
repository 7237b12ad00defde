package storagetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/timetabledb/timetable/storage"
)

// Table names must fit DynamoDB's rules: 3 to 255 characters of
// [A-Za-z0-9_.-]. A name is "tt." + the sanitised test name (at most
// maxTestPart characters) + "." + the run id + "." + a sequence number +
// "." + a tag the check chooses, which leaves room for tags of up to 60
// characters.
const (
	maxTableName = 255
	maxTestPart  = 150
)

// newRunID returns a random id telling this run's tables from those of
// earlier runs against the same server.
func newRunID(t *testing.T) string {
	var b [4]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err, "run id")
	return hex.EncodeToString(b[:])
}

// sanitise maps a test name onto the table-name alphabet: '/' becomes '.',
// any other character outside [A-Za-z0-9_.-] becomes '_', and the result
// is cut to max bytes.
func sanitise(name string, max int) string {
	var b strings.Builder
	for i := 0; i < len(name) && b.Len() < max; i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
			b.WriteByte(c)
		case c == '/':
			b.WriteByte('.')
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// prefix returns a table-name prefix no other check or run uses. Names
// made by appending a tag to it list together, in the tags' order.
func (s *suite) prefix(t *testing.T) string {
	return fmt.Sprintf("tt.%s.%s.%04d.", sanitise(t.Name(), maxTestPart), s.run, s.seq.Add(1))
}

// tableName returns a fresh table name for t.
func (s *suite) tableName(t *testing.T) string {
	return s.prefix(t) + "t"
}

// spec returns the spec the checks create tables with: small provisioned
// capacity, one tag, no TTL.
func spec(name string) storage.TableSpec {
	return storage.TableSpec{
		Name:     name,
		Capacity: storage.Capacity{Billing: storage.Provisioned, Read: 5, Write: 5},
		Tags:     map[string]string{"suite": "storagetest"},
	}
}

// createTable creates a table for t under a fresh name and deletes it when
// t ends.
func (s *suite) createTable(t *testing.T, st storage.Store) string {
	name := s.tableName(t)
	s.create(t, st, spec(name))
	return name
}

// create creates the table in sp, requires success, and deletes the table
// when t ends.
func (s *suite) create(t *testing.T, st storage.Store, sp storage.TableSpec) {
	t.Helper()
	require.NoError(t, st.CreateTable(context.Background(), sp), "create table %q", sp.Name)
	deleteAtCleanup(t, st, sp.Name)
}

// deleteAtCleanup deletes the table when t ends; a table already gone is
// fine.
func deleteAtCleanup(t *testing.T, st storage.Store, name string) {
	t.Cleanup(func() {
		err := st.DeleteTable(context.Background(), name)
		if err != nil && !errors.Is(err, storage.ErrTableNotFound) {
			t.Errorf("cleanup: delete table %q: %v", name, err)
		}
	})
}
