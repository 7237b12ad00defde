package dynamostore

import (
	"testing"

	"github.com/timetabledb/timetable/internal/dynamotest"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/storagetest"
)

// TestConformance runs the storage conformance suite against the test
// server, told what the server lacks (internal/dynamotest). Tables are cheap on dynalite, so the suite may create more than
// a hundred to check ListTables across pages; reopening a store means a
// new client on the same server.
func TestConformance(t *testing.T) {
	testEndpoint(t)
	storagetest.RunWithOptions(t, func(t *testing.T) storage.Store {
		return openStore(t, Options{})
	}, storagetest.Options{
		ManyTables:           true,
		NoTags:               dynamotest.Lacks(dynamotest.Tagging) != "",
		CaseInsensitiveNames: dynamotest.Lacks(dynamotest.CaseSensitiveNames) != "",
		Reopen: func(t *testing.T, _ storage.Store) storage.Store {
			return openStore(t, Options{})
		},
	})
}
