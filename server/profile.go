package server

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime/pprof"
	"strconv"
	"time"
)

// maxProfile bounds the seconds of one CPU profile.
const maxProfile = 60

// cpuProfile answers GET /v1/admin/debug/cpu?seconds=: a CPU profile of
// the whole process over that many seconds (1 to 60, 30 by default), in
// pprof's format (go tool pprof reads it, and merges several given at
// once). It is an admin route, because a profile tells how the server
// spends its time to whoever asks, and it costs that time. The benchmark
// profiles the server's ingest with it. It is not net/http/pprof's
// Profile handler because that one takes a malformed seconds for 30 and
// answers a profile already running with a 500; here both are 4xx.
func (s *Server) cpuProfile(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r.URL.Query(), "seconds"); err != nil {
		return err
	}
	seconds := 30
	if v := r.URL.Query().Get("seconds"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxProfile {
			return fmt.Errorf("%w: seconds: %q is not a whole number from 1 to %d", ErrBadParameter, v, maxProfile)
		}
		seconds = n
	}
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return &httpError{status: http.StatusConflict, msg: "timetable: a CPU profile is running already: " + err.Error()}
	}
	select {
	case <-time.After(time.Duration(seconds) * time.Second):
	case <-r.Context().Done():
	}
	pprof.StopCPUProfile()
	if err := r.Context().Err(); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="cpu.pb.gz"`)
	_, err := w.Write(buf.Bytes())
	return err
}
