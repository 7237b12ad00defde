package doctest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	page := "# Title\n\n```yaml\na: 1\n```\n\n" +
		"```sh\ncurl -s localhost   # an explanation\n# {\"written\":2}\n\necho hi\n# hi\n#   there\ncat > f <<'EOF'\n# not output\nEOF\n```\n\n" +
		"<!-- doctest: skip needs AWS -->\n```sh\naws s3 ls\n```\n" +
		"<!-- doctest: needs influx mosquitto_pub -->\n<!-- doctest: setup\nKEY=1\n-->\n```sh\ninflux\n```\n" +
		"```\n$ not run\n```\n" +
		"- a list item:\n\n  ```sh\n  echo indented\n  ```\n"
	blocks, err := Parse(page)
	require.NoError(t, err)
	require.Len(t, blocks, 4)
	require.Equal(t, "echo indented\n", blocks[3].Script)
	require.Equal(t, 7, blocks[0].Line)
	require.Equal(t, []string{`{"written":2}`, "hi\nthere"}, blocks[0].Output)
	require.Equal(t, "needs AWS", blocks[1].Skip)
	require.Equal(t, []string{"influx", "mosquitto_pub"}, blocks[2].Needs)
	require.Equal(t, "KEY=1\ninflux\n", blocks[2].Script)

	for _, bad := range []string{
		"<!-- doctest: skip -->\n```sh\nx\n```\n",
		"<!-- doctest: skip why -->\n\ntext\n```sh\nx\n```\n",
		"<!-- doctest: skip why -->\n```yaml\nx: 1\n```\n",
		"<!-- doctest: later -->\n```sh\nx\n```\n",
		"```sh\nx\n",
	} {
		_, err := Parse(bad)
		require.Error(t, err, bad)
	}
}

func TestMatches(t *testing.T) {
	got := "TIME  SERIES\n2026-11-21T12:00:00Z  car-17\n{\"events\":[{\"id\":\"abc\",\"x\":1}]}\n"
	require.True(t, Matches(got, nil))
	require.True(t, Matches(got, []string{"TIME SERIES\n2026-11-21T12:00:00Z car-17"}))
	require.True(t, Matches(got, []string{"TIME", `{"events":[{"id":"...","x":1}]}`}))
	require.True(t, Matches(got, []string{`{"events":[{"id":"…",`}))
	require.False(t, Matches(got, []string{`{"events"`, "TIME"}), "out of order")
	require.False(t, Matches(got, []string{`"x":2`}))
}
