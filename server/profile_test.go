package server_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/server"
)

func TestCPUProfile(t *testing.T) {
	f := newFixture(t, server.Options{AdminToken: adminToken})

	// Only the admin token profiles.
	res := f.do("GET", "/v1/admin/debug/cpu?seconds=1", f.acme, nil)
	require.Equal(t, http.StatusUnauthorized, res.status, "%s", res.body)
	for _, q := range []string{"seconds=0", "seconds=61", "seconds=1.5", "seconds=x", "second=1"} {
		res := f.do("GET", "/v1/admin/debug/cpu?"+q, adminToken, nil)
		require.Equal(t, http.StatusBadRequest, res.status, "%s: %s", q, res.body)
	}

	// A profile is pprof's gzipped protocol buffer.
	res = f.do("GET", "/v1/admin/debug/cpu?seconds=1", adminToken, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	z, err := gzip.NewReader(bytes.NewReader(res.body))
	require.NoError(t, err)
	raw, err := io.ReadAll(z)
	require.NoError(t, err)
	require.NotEmpty(t, raw)
}
