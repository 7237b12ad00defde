package pebblestore_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests when a goroutine outlives them: Close stops Pebble's background goroutines.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
