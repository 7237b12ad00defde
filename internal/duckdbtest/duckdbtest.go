// Package duckdbtest runs SQL in DuckDB, so that tests read the Parquet
// files timetable writes with a reader no one here wrote. It runs DuckDB's
// Node API (scripts/duckdb/query.mjs), which scripts/duckdb/install.sh
// installs from the npm registry on first use, pinned by its lock file.
// A test that calls Query is skipped, saying why, only when node or npm
// is absent; an install that fails fails the test.
package duckdbtest

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Result is the answer to one SQL statement.
type Result struct {
	Columns []string `json:"columns"`
	// Types are DuckDB's names of the columns' types ("BIGINT",
	// "DECIMAL(38,3)", "TIMESTAMP WITH TIME ZONE").
	Types []string `json:"types"`
	// Rows hold each row's values by column name, as JSON gives them: big
	// integers, decimals and timestamps as strings, every digit kept.
	Rows []map[string]any `json:"rows"`
}

// Type returns the type of the named column, "" when there is none.
func (r Result) Type(column string) string {
	for i, c := range r.Columns {
		if c == column {
			return r.Types[i]
		}
	}
	return ""
}

var install struct {
	once    sync.Once
	modules string
	err     error
	out     string
}

// root returns the module's root folder.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Query runs the statements in one in-memory DuckDB, in order, and
// returns their answers.
func Query(t testing.TB, statements ...string) []Result {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("DuckDB check skipped: %s is not installed, and DuckDB's Node API needs it", tool)
		}
	}
	install.once.Do(func() {
		var stderr bytes.Buffer
		cmd := exec.Command(filepath.Join(root(), "scripts", "duckdb", "install.sh"))
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		install.modules, install.err, install.out = strings.TrimSpace(string(out)), err, stderr.String()
	})
	if install.err != nil {
		t.Fatalf("install DuckDB's Node API: %v\n%s", install.err, install.out)
	}
	args := append([]string{filepath.Join(root(), "scripts", "duckdb", "query.mjs"), install.modules}, statements...)
	var stderr bytes.Buffer
	cmd := exec.Command("node", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("duckdb: %v\n%s\nstatements: %q", err, stderr.String(), statements)
	}
	var rs []Result
	if err := json.Unmarshal(out, &rs); err != nil {
		t.Fatalf("duckdb: read its answer: %v\n%s", err, out)
	}
	return rs
}

// Quote returns s as a SQL string literal, for file paths in statements.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
