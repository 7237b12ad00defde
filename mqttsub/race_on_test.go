//go:build race

package mqttsub_test

// raceEnabled reports whether the race detector is on: it changes what
// memory holds, so the memory bound skips under it (scripts/test.sh runs
// it again without the detector).
const raceEnabled = true
