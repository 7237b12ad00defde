package tenant_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests when a goroutine outlives them: the tenant store's concurrent callers all finish.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
