package dynamostore

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/timetabledb/timetable/storage"
)

// Options configure a Store. The zero value is valid: every zero field
// takes the default its comment names.
type Options struct {
	// Client is the DynamoDB client to use. When nil, Open builds one from
	// the standard AWS configuration chain (config.LoadDefaultConfig), so
	// AWS_REGION, AWS_PROFILE, the credential sources and
	// AWS_ENDPOINT_URL_DYNAMODB apply as they do for the AWS CLI; its
	// HTTP client keeps up to 100 idle connections to the endpoint, as
	// NewHTTPClient's does, which a Client built elsewhere should use too.
	Client *dynamodb.Client

	// AutoScaling, when set, auto scales the provisioned tables whose
	// capacity has a peak (storage.Capacity.MaxRead/MaxWrite) with
	// Application Auto Scaling target tracking: registered when the table
	// is made or takes such a capacity, deregistered when it leaves it or
	// is deleted. When nil, Open builds one from the AWS configuration
	// chain if it builds the DynamoDB client itself for AWS (no endpoint
	// override); otherwise such tables keep their floor, with a warning.
	AutoScaling AutoScaler

	// ClientOptions are applied to the client Open builds when Client is
	// nil, after the configuration chain: an HTTPClient, a BaseEndpoint,
	// middleware in APIOptions.
	ClientOptions []func(*dynamodb.Options)

	// MaxAttempts bounds the attempts of one request, the first included,
	// that fail with an error the SDK's standard retryer retries: a 5xx
	// answer, a dropped connection, and throttling when the request's
	// context has no deadline. Throttling
	// (ProvisionedThroughputExceededException, ThrottlingException,
	// RequestLimitExceeded) in a request whose context has a deadline is
	// retried until that deadline instead, however many attempts it
	// takes: the engine gives every write its WriteTimeout. Every request
	// gets its attempts, however much throttling came before: the retryer
	// has no retry quota shared across requests. The request's context
	// bounds the attempts and the waits between them. Default 10. With a
	// Client given, the store keeps that client's retryer unless
	// MaxAttempts is set.
	MaxAttempts int
	// RetryBaseDelay is the first backoff of the retryer and of re-sent
	// UnprocessedItems; the n-th wait is drawn uniformly from
	// [0, min(MaxBackoff, RetryBaseDelay * 2^n)) (full jitter). Default
	// 50 ms.
	RetryBaseDelay time.Duration
	// MaxBackoff caps one backoff. Default 20 s.
	MaxBackoff time.Duration
	// MaxUnprocessedAttempts bounds how many times BatchWrite sends a
	// request's items while DynamoDB leaves some of them unprocessed, the
	// first send included, when the context has no deadline; with one,
	// they are sent until the deadline. Default 10.
	MaxUnprocessedAttempts int

	// WriteConcurrency is how many BatchWriteItem requests of 25 items one
	// BatchWrite keeps in flight. Default 8.
	WriteConcurrency int

	// WaitMinDelay and WaitMaxDelay bound the delay between two
	// DescribeTable calls while waiting for a table to become ACTIVE or to
	// disappear. Defaults: 2 s and 20 s against AWS; 25 ms and 1 s when
	// the client has an endpoint override (DynamoDB Local, dynalite),
	// where tables change state in milliseconds.
	WaitMinDelay time.Duration
	WaitMaxDelay time.Duration
	// WaitTimeout bounds one such wait. Default 10 minutes.
	WaitTimeout time.Duration
	// ControlTimeout bounds each call of the control plane (CreateTable,
	// DeleteTable, UpdateTable, DescribeTable, ListTables, TTL, tags,
	// backups, exports, imports and Application Auto Scaling), its
	// retries included, whatever the caller's context allows: a call
	// the endpoint never answers fails after it with an error naming the
	// operation and wrapping storage.ErrUnavailable. Each call of a wait
	// is bounded so, and the wait by WaitTimeout. Default 1 minute.
	ControlTimeout time.Duration

	// EventuallyConsistent makes GetItem, Query and Scan use eventually
	// consistent reads, at half the read units. By default reads are
	// strongly consistent: a read sees every write acknowledged before it,
	// as on the embedded store.
	EventuallyConsistent bool

	// TableQuota is the number of tables the account may have in the
	// region: a LimitExceededException on CreateTable is the table quota
	// (storage.ErrTableQuota) only when ListTables counts at least this
	// many tables, and otherwise the limit on table operations at once
	// (storage.ErrRefused). Default DefaultTableQuota, DynamoDB's default
	// quota; set the raised quota of an account that has one.
	TableQuota int

	// Logger receives the store's warnings. Default slog.Default().
	Logger *slog.Logger

	// Registerer receives the store's metrics: throttles, retries,
	// unprocessed items and consumed capacity, by table (see the package
	// documentation). Nil means none are exported.
	Registerer prometheus.Registerer
}

// Defaults the zero fields of Options take.
const (
	DefaultMaxAttempts            = 10
	DefaultRetryBaseDelay         = 50 * time.Millisecond
	DefaultMaxBackoff             = 20 * time.Second
	DefaultMaxUnprocessedAttempts = 10
	DefaultWriteConcurrency       = 8
	DefaultWaitTimeout            = 10 * time.Minute
	DefaultControlTimeout         = time.Minute
	DefaultTableQuota             = storage.DefaultTableQuota

	// Waiter delays against AWS, and against an endpoint override.
	DefaultWaitMinDelay      = 2 * time.Second
	DefaultWaitMaxDelay      = 20 * time.Second
	DefaultLocalWaitMinDelay = 25 * time.Millisecond
	DefaultLocalWaitMaxDelay = time.Second
)

// errInvalidOptions marks Options that Validate refuses.
var errInvalidOptions = errors.New("timetable: invalid dynamodb store options")

// Validate reports fields that hold values no default can mend: negative
// counts and durations, or a minimum wait above the maximum.
func (o *Options) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxAttempts", int64(o.MaxAttempts)},
		{"RetryBaseDelay", int64(o.RetryBaseDelay)},
		{"MaxBackoff", int64(o.MaxBackoff)},
		{"MaxUnprocessedAttempts", int64(o.MaxUnprocessedAttempts)},
		{"WriteConcurrency", int64(o.WriteConcurrency)},
		{"WaitMinDelay", int64(o.WaitMinDelay)},
		{"WaitMaxDelay", int64(o.WaitMaxDelay)},
		{"WaitTimeout", int64(o.WaitTimeout)},
		{"ControlTimeout", int64(o.ControlTimeout)},
		{"TableQuota", int64(o.TableQuota)},
	} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%w: %s is negative", errInvalidOptions, f.name))
		}
	}
	if o.WaitMinDelay > 0 && o.WaitMaxDelay > 0 && o.WaitMinDelay > o.WaitMaxDelay {
		errs = append(errs, fmt.Errorf("%w: WaitMinDelay %v exceeds WaitMaxDelay %v", errInvalidOptions, o.WaitMinDelay, o.WaitMaxDelay))
	}
	return errors.Join(errs...)
}

// ensureDefaults fills the zero fields. local tells whether the client
// talks to an endpoint override, which picks the waiter delays.
func (o *Options) ensureDefaults(local bool) {
	if o.RetryBaseDelay == 0 {
		o.RetryBaseDelay = DefaultRetryBaseDelay
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.MaxUnprocessedAttempts == 0 {
		o.MaxUnprocessedAttempts = DefaultMaxUnprocessedAttempts
	}
	if o.WriteConcurrency == 0 {
		o.WriteConcurrency = DefaultWriteConcurrency
	}
	if o.TableQuota == 0 {
		o.TableQuota = DefaultTableQuota
	}
	if o.WaitTimeout == 0 {
		o.WaitTimeout = DefaultWaitTimeout
	}
	if o.ControlTimeout == 0 {
		o.ControlTimeout = DefaultControlTimeout
	}
	minDelay, maxDelay := DefaultWaitMinDelay, DefaultWaitMaxDelay
	if local {
		minDelay, maxDelay = DefaultLocalWaitMinDelay, DefaultLocalWaitMaxDelay
	}
	if o.WaitMinDelay == 0 {
		o.WaitMinDelay = minDelay
		if o.WaitMaxDelay > 0 && o.WaitMaxDelay < o.WaitMinDelay {
			o.WaitMinDelay = o.WaitMaxDelay
		}
	}
	if o.WaitMaxDelay == 0 {
		o.WaitMaxDelay = max(maxDelay, o.WaitMinDelay)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}
