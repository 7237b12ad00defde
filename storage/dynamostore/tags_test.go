package dynamostore

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/internal/dynamotest"
	"github.com/timetabledb/timetable/storage"
)

// TestNoTaggingIsSaidOnceAtInfo: on an endpoint without tagging (DynamoDB
// Local), tables are made without tags and the store says so once, at
// info level, which a CLI command (at warn) does not print.
func TestNoTaggingIsSaidOnceAtInfo(t *testing.T) {
	if dynamotest.Lacks(dynamotest.Tagging) == "" {
		t.Skip("the server has tagging")
	}
	var log bytes.Buffer
	s := openStore(t, Options{Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	for range 2 {
		createTable(t, s, storage.TableSpec{Tags: map[string]string{"family": "events"}})
	}
	require.Equal(t, 1, strings.Count(log.String(), "does not support tagging"), "%s", log.String())
	require.NotContains(t, log.String(), "level=WARN")
	require.Contains(t, log.String(), "level=INFO")
}
