package mqttsub_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests when a goroutine outlives them: Close stops every subscription's goroutine and its MQTT client.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
