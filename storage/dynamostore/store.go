package dynamostore

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/applicationautoscaling"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/timetabledb/timetable/storage"
)

// Store is a storage.Store on DynamoDB. Its methods may be called from any
// number of goroutines at once.
type Store struct {
	client *dynamodb.Client
	opts   Options
	log    *slog.Logger
	// callOpts are applied to every request: the store's retry policy
	// and the middleware of its metrics.
	callOpts []func(*dynamodb.Options)
	// retries is the store's retry policy; zero when it keeps the
	// retryer of a client it was given.
	retries retryPolicy
	metrics *metrics
	// unprocessed paces the re-sending of UnprocessedItems.
	unprocessed backoff

	// ttlWarning makes sure an endpoint without TTL is reported once.
	ttlWarning sync.Once
	// noTagging is set once the endpoint answered a tag call as an
	// unknown operation (DynamoDB Local): tag calls are not sent again.
	noTagging atomic.Bool
	// taggingWarning makes sure it is reported once.
	taggingWarning sync.Once
	// noExport is set once the endpoint answered an export or import
	// call as an unknown operation (DynamoDB Local, dynalite): they are
	// not sent again (export.go).
	noExport atomic.Bool
	// noClass is set once the endpoint showed it ignores table classes
	// (DynamoDB Local, dynalite): class changes are not sent again
	// (updatetable.go).
	noClass atomic.Bool

	// gate counts the calls in progress; Close waits for them.
	gate storage.Gate
}

var _ storage.Store = (*Store)(nil)

// Open returns a Store on the DynamoDB endpoint of opts.Client, or of the
// standard AWS configuration chain when opts.Client is nil. It makes no
// request: without a region it fails at once, saying what sets one; a
// wrong region, or missing credentials (the error ending with what sets
// them), show on the first call.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	client := opts.Client
	if client == nil {
		cfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("open dynamodb store: load AWS config: %w", err)
		}
		if opts.MaxAttempts == 0 {
			opts.MaxAttempts = DefaultMaxAttempts
		}
		if cfg.Credentials != nil {
			cfg.Credentials = credentialsHint{cfg.Credentials}
		}
		client = dynamodb.NewFromConfig(cfg, append([]func(*dynamodb.Options){withPooledConnections}, opts.ClientOptions...)...)
		if client.Options().Region == "" {
			return nil, fmt.Errorf("open dynamodb store: no AWS region: set AWS_REGION, or AWS_PROFILE to a profile with a region")
		}
		if opts.AutoScaling == nil && client.Options().BaseEndpoint == nil {
			opts.AutoScaling = applicationautoscaling.NewFromConfig(cfg)
		}
	}
	opts.ensureDefaults(client.Options().BaseEndpoint != nil)

	s := &Store{
		client:      client,
		opts:        opts,
		log:         opts.Logger,
		unprocessed: backoff{base: opts.RetryBaseDelay, max: opts.MaxBackoff},
		metrics:     newMetrics(opts.Registerer),
	}
	s.callOpts = append(s.callOpts, supplyChecksum, controlDeadline(opts.ControlTimeout))
	if opts.MaxAttempts > 0 {
		s.retries = newRetryPolicy(opts.MaxAttempts, s.unprocessed)
		s.callOpts = append(s.callOpts, s.retries.clientOption)
	}
	s.callOpts = append(s.callOpts, s.metrics.clientOption)
	return s, nil
}

// credentialsHint ends the error of credentials that cannot be found,
// which the SDK's chain ends with its last source's (EC2 instance
// metadata, "no EC2 IMDS role found"), with what a user sets.
type credentialsHint struct{ aws.CredentialsProvider }

func (c credentialsHint) Retrieve(ctx context.Context) (aws.Credentials, error) {
	creds, err := c.CredentialsProvider.Retrieve(ctx)
	if err != nil {
		return creds, fmt.Errorf("%w; no AWS credentials found: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run with an instance role", err)
	}
	return creds, nil
}

// Options returns the options the store runs with: the ones given to Open
// with every default filled in, and Client set to the client in use.
func (s *Store) Options() Options {
	o := s.opts
	o.Client = s.client
	o.ClientOptions = slices.Clone(o.ClientOptions)
	return o
}

// Client returns the DynamoDB client the store uses, for callers that need
// a request the store does not make.
func (s *Store) Client() *dynamodb.Client { return s.client }

// Close waits for the calls in progress and makes later calls return
// storage.ErrClosed. Iterators still open stop at their next page. It is safe to
// call twice.
func (s *Store) Close() error {
	s.gate.Close()
	return nil
}

// returnCapacity is the ReturnConsumedCapacity of the store's reads and
// writes, for the metrics of consumed capacity.
const returnCapacity = types.ReturnConsumedCapacityTotal

// consistentRead is the ConsistentRead flag of the store's reads.
func (s *Store) consistentRead() *bool {
	return aws.Bool(!s.opts.EventuallyConsistent)
}
