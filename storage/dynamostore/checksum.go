package dynamostore

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// The SDK checks every DynamoDB response body against its X-Amz-Crc32
// header, and when a response has no such header it checks the body
// against 0, fails, and logs "failed to close HTTP response body ...
// response did not match expected checksum, 0, N" as it closes the body
// (aws-sdk-go-v2 issue #3545). AWS's DynamoDB sends the header on every
// response; DynamoDB Local omits it on error responses, so every refused
// condition or missing table would print that warning. supplyChecksum sits
// just inside the SDK's check: a response without the header has its body
// read and the header set to the body's own CRC32, which the check then
// confirms, as it would skip a response without a checksum were it written
// as its documentation says. Responses that carry the header, all of AWS's,
// are passed through untouched and checked as before.

// checksumMiddlewareID is the SDK's response checksum middleware.
const checksumMiddlewareID = "DynamoDB:ResponseChecksumValidation"

// supplyChecksum adds the middleware to a client's stack when the SDK's
// check is in it.
func supplyChecksum(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		if _, ok := stack.Deserialize.Get(checksumMiddlewareID); !ok {
			return nil
		}
		return stack.Deserialize.Insert(middleware.DeserializeMiddlewareFunc("timetable:SupplyMissingChecksum", supplyMissingChecksum),
			checksumMiddlewareID, middleware.After)
	})
}

func supplyMissingChecksum(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleDeserialize(ctx, in)
	if err != nil {
		return out, md, err
	}
	resp, ok := out.RawResponse.(*smithyhttp.Response)
	if !ok || resp.Header.Get("X-Amz-Crc32") != "" {
		return out, md, err
	}
	body, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	if rerr != nil {
		return out, md, fmt.Errorf("read response body: %w", rerr)
	}
	resp.Header.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return out, md, nil
}
