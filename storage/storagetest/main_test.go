package storagetest

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests when a goroutine outlives them: the conformance suite's concurrent calls all finish.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
