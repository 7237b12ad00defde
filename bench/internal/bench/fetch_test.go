package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFetchReusesItsConnection checks that fetch reads every answer to
// its end, so that the client's connection serves the next request: an
// answer of a known length and a chunked one, each a JSON value and more
// white space after it than the decoder reads with the value.
func TestFetchReusesItsConnection(t *testing.T) {
	value := `{"events":[` + strings.Repeat(`{"time":"2017-04-10T12:00:00Z","fields":{"n":1}},`, 40) + `{}]}`
	trailer := strings.Repeat(" ", 1<<16) + "\n"
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			var conns atomic.Int64
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if !chunked {
					w.Header().Set("Content-Length", strconv.Itoa(len(value)+len(trailer)))
				}
				_, _ = w.Write([]byte(value))
				if chunked {
					w.(http.Flusher).Flush()
				}
				_, _ = w.Write([]byte(trailer))
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Start()
			defer srv.Close()
			client := peerHTTP()
			defer client.CloseIdleConnections()
			for range 20 {
				var answer struct{ Events []map[string]any }
				require.NoError(t, fetch(context.Background(), client, http.MethodGet, srv.URL, nil, nil, &answer))
				require.Len(t, answer.Events, 41)
			}
			require.Equal(t, int64(1), conns.Load(), "connections opened for 20 requests one after the other")
		})
	}
}
