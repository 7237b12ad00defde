package storage_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests when a goroutine outlives them: Gate.Close waits for the calls in progress.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
