package mqttsub_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/timetabledb/timetable/internal/dynamotest"
)

// TestMain fails the tests when a goroutine outlives them: Close stops
// every subscription's goroutine and its MQTT client. The DynamoDB
// client's idle connections are the HTTP client's (dynamotest).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, dynamotest.IdleConnections()...)
}
