package client

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/api"
)

// A path is api's pattern with each wildcard an escaped segment.
func TestPath(t *testing.T) {
	require.Equal(t, "/v1/admin/tenants/a%2Fb/keys/k%201/rotate", path(api.PathRotateKey, "a/b", "k 1"))
	require.Equal(t, "/v1/tables/cars.v2/events", path(api.PathEvents, "cars.v2"))
	require.Equal(t, "/v1/admin/tables", path(api.PathPhysicalTables))
}
