//go:build !race

package mqttsub_test

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
