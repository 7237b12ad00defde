package doctest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The layout rules of docs/design.md ("Layers, in the order data flows"
// and "Where the code is"), checked against the tree as `go list` sees it.

// listed is what `go list -json` says of a package, as far as the checks
// need.
type listed struct {
	ImportPath string
	Dir        string
	Doc        string
	Imports    []string // not those of its _test.go files
}

// module is the module under test: its path, its root and its packages.
type module struct {
	Path string
	Dir  string
	Pkgs []listed
}

// goCommand returns the go command that runs the tests.
func goCommand(t *testing.T) string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	_, err := os.Stat(p)
	require.NoError(t, err, "the layout checks need the go command")
	return p
}

// listModule lists the module this package belongs to.
func listModule(t *testing.T) module {
	t.Helper()
	goCmd := goCommand(t)
	out, err := exec.Command(goCmd, "list", "-m", "-json").Output()
	require.NoError(t, err, "go list -m")
	var m module
	require.NoError(t, json.Unmarshal(out, &m))
	cmd := exec.Command(goCmd, "list", "-e", "-json=ImportPath,Dir,Doc,Imports", "./...")
	cmd.Dir = m.Dir
	out, err = cmd.Output()
	require.NoError(t, err, "go list ./...")
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		m.Pkgs = append(m.Pkgs, p)
	}
	require.NotEmpty(t, m.Pkgs)
	return m
}

// TestImportsIntoInternal checks the rule of docs/design.md: internal/
// holds test harnesses only, which no package of the product imports
// outside its tests.
func TestImportsIntoInternal(t *testing.T) {
	m := listModule(t)
	for _, v := range importsIntoInternal(m) {
		t.Error(v)
	}
}

// importsIntoInternal returns a message for each import, outside a
// _test.go file, of a package of the module's internal/ by a package
// outside it.
func importsIntoInternal(m module) []string {
	internal := m.Path + "/internal/"
	var bad []string
	for _, p := range m.Pkgs {
		if strings.HasPrefix(p.ImportPath, internal) {
			continue
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, internal) {
				bad = append(bad, fmt.Sprintf("%s imports %s outside its tests, but internal/ holds only test harnesses, "+
					"which only tests import (docs/design.md, \"Layers, in the order data flows\"): "+
					"move %s to the top of the module (git mv internal/%s %s) if it is a leaf the product shares, "+
					"or the import into a _test.go file",
					p.ImportPath, imp, strings.TrimPrefix(imp, m.Path+"/"), strings.TrimPrefix(imp, internal), filepath.Base(imp)))
			}
		}
	}
	return bad
}

func TestImportsIntoInternalFindsAnImportOfAHarness(t *testing.T) {
	m := module{Path: "example.com/m", Pkgs: []listed{
		{ImportPath: "example.com/m/api", Imports: []string{"strings", "example.com/m/jsonnum"}},
		{ImportPath: "example.com/m/event", Imports: []string{"example.com/m/internal/jsonnum"}},
		{ImportPath: "example.com/m/engine/internal/agg"},
		{ImportPath: "example.com/m/engine", Imports: []string{"example.com/m/engine/internal/agg"}},
		{ImportPath: "example.com/m/internal/backends", Imports: []string{"example.com/m/engine", "example.com/m/internal/dynamotest"}},
	}}
	bad := importsIntoInternal(m)
	require.Len(t, bad, 1)
	require.Contains(t, bad[0], "example.com/m/event imports example.com/m/internal/jsonnum outside its tests")
	require.Contains(t, bad[0], "git mv internal/jsonnum jsonnum")
}
