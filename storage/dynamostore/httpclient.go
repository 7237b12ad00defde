package dynamostore

import (
	"net/http"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// A DynamoDB client talks to the one endpoint of its region, and the
// SDK's default HTTP transport keeps at most 10 idle connections to one
// host, fewer than the requests in flight of two concurrent BatchWrites
// (Options.WriteConcurrency each): every connection past them was closed
// as its request ended and opened again, with its TCP and TLS handshakes,
// by the next request. The clients Open builds keep as many idle
// connections to their host as the transport keeps in all (100).

// keepConnections lets a transport keep all its idle connections for one
// host.
func keepConnections(tr *http.Transport) {
	tr.MaxIdleConnsPerHost = max(tr.MaxIdleConnsPerHost, tr.MaxIdleConns)
}

// NewHTTPClient returns an HTTP client like the one Open gives the
// DynamoDB client it builds: the SDK's default, keeping its idle
// connections for one host. A caller that builds its own DynamoDB client
// can pass it as the HTTPClient, or give its own transport a pool as large
// as its requests in flight.
func NewHTTPClient() *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().WithTransportOptions(keepConnections)
}

// withPooledConnections makes the SDK's HTTP client of a client Open
// builds keep its idle connections for one host. A client the
// configuration chain supplied that is not the SDK's is left as it is,
// and ClientOptions applied after may set another.
func withPooledConnections(o *dynamodb.Options) {
	if c, ok := o.HTTPClient.(*awshttp.BuildableClient); ok {
		o.HTTPClient = c.WithTransportOptions(keepConnections)
	}
}
