package dynamostore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// withoutAWSConfig clears the AWS configuration the process has: no
// variables, no files, no instance metadata.
func withoutAWSConfig(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	for _, name := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"} {
		t.Setenv(name, "")
	}
	t.Setenv("AWS_CONFIG_FILE", missing)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", missing)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// TestOpenWithoutAWSConfig: without a region, Open says which variables
// set one; without credentials, the first call's error ends with which
// set them, not with the chain's last source (instance metadata).
func TestOpenWithoutAWSConfig(t *testing.T) {
	withoutAWSConfig(t)
	_, err := Open(context.Background(), Options{})
	require.ErrorContains(t, err, "no AWS region: set AWS_REGION, or AWS_PROFILE to a profile with a region")

	t.Setenv("AWS_REGION", "us-east-1")
	// Nothing listens there: the call fails on its credentials first.
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:1")
	s, err := Open(context.Background(), Options{MaxAttempts: 1})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.DescribeTable(context.Background(), "t")
	require.Error(t, err)
	require.Regexp(t, `no AWS credentials found: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run with an instance role$`, err.Error())
}
