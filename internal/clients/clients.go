// Package clients finds, for tests, the programs no one on this project
// wrote that the ingest and query paths are tested with: InfluxDB's influx
// CLI and Python client, InfluxDB 1.x itself (influxd, StartInfluxd), and
// the mosquitto broker and its command-line clients (Debian's
// influxdb-client, python3-influxdb, influxdb, mosquitto and
// mosquitto-clients), and InfluxDB's influx_inspect, built from its
// source.
//
// scripts/install-clients.sh installs them when they are missing, and
// `make test` (scripts/test.sh) runs it and then sets RequireEnv, so that
// there a missing program fails its test. Elsewhere (a plain `go test`)
// a test without its program skips and says how to install it.
package clients

import (
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RequireEnv, when set, turns a missing program into a failure.
const RequireEnv = "TIMETABLE_REQUIRE_CLIENTS"

// Command returns the path of a program, on PATH or in Go's bin
// directory (where scripts/install-clients.sh builds influx_inspect), or
// ends the test: it fails under RequireEnv and skips otherwise.
func Command(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if path, err = exec.LookPath(filepath.Join(build.Default.GOPATH, "bin", name)); err == nil {
		return path
	}
	missing(t, name+" is not installed")
	return ""
}

// Python returns a Python 3 interpreter that imports module, or ends the
// test as Command does. Debian's packages go to /usr/bin/python3, which
// another python3 earlier on PATH (pyenv's) does not see, so that one is
// tried first.
func Python(t testing.TB, module string) string {
	t.Helper()
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(py); err == nil && exec.Command(path, "-c", "import "+module).Run() == nil {
			return path
		}
	}
	missing(t, "no python3 imports "+module)
	return ""
}

func missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv(RequireEnv) != "" {
		t.Fatalf("%s, and %s is set: scripts/install-clients.sh should have installed it", what, RequireEnv)
	}
	t.Skipf("%s: run scripts/install-clients.sh (make test does) to test against it", what)
}
