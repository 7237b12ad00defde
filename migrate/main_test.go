package migrate_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/timetabledb/timetable/internal/dynamotest"
)

// TestMain fails the tests when a goroutine outlives them, but for the
// idle connections of the DynamoDB client.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, dynamotest.IdleConnections()...)
}
