//go:build !race

package server_test

// raceEnabled reports whether the race detector is on: it slows the
// memory test down and changes its figures.
const raceEnabled = false
