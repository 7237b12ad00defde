package dynamotest

import "go.uber.org/goleak"

// IdleConnections returns the goleak options of a package whose tests
// reach a DynamoDB-API server: they ignore the goroutines of the AWS SDK's
// idle keep-alive connections, a read loop and a write loop each, which
// outlive the tests. A dynamostore.Store cannot close them on Close: the
// SDK's HTTP client (awshttp.BuildableClient) hides the transport that
// pools them, and wraps it in one without CloseIdleConnections. They close
// on their own after the transport's IdleConnTimeout (90 s), so they do
// not pile up in a server. No other goroutine is ignored.
func IdleConnections() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
	}
}
