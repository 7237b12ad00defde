package lifecycle

import (
	"context"
	"errors"
	"fmt"

	"github.com/timetabledb/timetable/config"
)

// Operations a LambdaEvent may ask for: the AWS blog's two scheduled jobs,
// and the whole cycle.
const (
	// OpCreateNew only creates tables (the blog's daily job that makes
	// tomorrow's table).
	OpCreateNew = "create_new"
	// OpResizeOld only changes capacity, billing and TTL (the blog's job
	// that dials yesterday's table down).
	OpResizeOld = "resize_old"
	// OpReconcile does everything Reconcile does. An event without an
	// Operation (a plain EventBridge schedule) means OpReconcile.
	OpReconcile = "reconcile"
)

// LambdaEvent is the input of the Lambda function:
// {"Operation": "create_new" | "resize_old" | "reconcile"}, and
// optionally "DryRun": true.
type LambdaEvent struct {
	Operation string `json:"Operation"`
	DryRun    bool   `json:"DryRun,omitempty"`
}

// LambdaResponse is the output of the Lambda function: every action with
// its result.
type LambdaResponse struct {
	Operation string   `json:"operation"`
	Actions   []Report `json:"actions"`
	// Skipped, when set, says why the invocation did nothing.
	Skipped string `json:"skipped,omitempty"`
}

// ErrUnknownOperation is returned for a LambdaEvent whose Operation is none
// of OpCreateNew, OpResizeOld and OpReconcile.
var ErrUnknownOperation = errors.New("timetable: unknown lifecycle operation")

// HandleLambda runs the operation an event asks for. Deferred actions are
// reported, not errors: the next scheduled run retries them. A failed
// action is an error, so the invocation shows as failed in CloudWatch.
// Another server holding the lease is not: the invocation succeeds with
// Skipped saying so.
func HandleLambda(ctx context.Context, r *Reconciler, ev LambdaEvent) (LambdaResponse, error) {
	op := ev.Operation
	if op == "" {
		op = OpReconcile
	}
	var kinds []Kind
	switch op {
	case OpCreateNew:
		kinds = []Kind{Create}
	case OpResizeOld:
		kinds = []Kind{UpdateBilling, UpdateCapacity, EnableTTL}
	case OpReconcile:
	default:
		return LambdaResponse{}, fmt.Errorf("%w %q: use %s, %s or %s", ErrUnknownOperation, ev.Operation, OpCreateNew, OpResizeOld, OpReconcile)
	}
	results, err := r.ReconcileKinds(ctx, ev.DryRun, kinds...)
	if errors.Is(err, ErrLeaseHeld) {
		// Another server or invocation is acting now: nothing to do
		// here, and nothing wrong.
		return LambdaResponse{Operation: op, Actions: []Report{}, Skipped: "another server holds the lifecycle lease and is acting now"}, nil
	}
	return LambdaResponse{Operation: op, Actions: Reports(results)}, err
}

// Environment variables the Lambda function reads its configuration from.
const (
	// EnvConfig is the path of a configuration file (in the function's
	// package, or a mounted file system).
	EnvConfig = "TIMETABLE_CONFIG"
	// EnvConfigYAML is the configuration itself, inline.
	EnvConfigYAML = "TIMETABLE_CONFIG_YAML"
	// EnvMetaTable names the meta table, over the configuration's
	// meta_table (deploy/template.yaml sets it from its MetaTable
	// parameter, which also scopes the function's IAM policy).
	EnvMetaTable = "TIMETABLE_META_TABLE"
)

// ConfigFromEnv reads the configuration named by EnvConfig, or given
// inline in EnvConfigYAML, or the defaults when neither is set, with the
// meta table EnvMetaTable names when set; getenv is os.Getenv in the
// function.
func ConfigFromEnv(getenv func(string) string) (config.Config, error) {
	c, err := configFromEnv(getenv)
	if meta := getenv(EnvMetaTable); err == nil && meta != "" {
		c.MetaTable = meta
		err = c.Validate()
	}
	return c, err
}

func configFromEnv(getenv func(string) string) (config.Config, error) {
	path, inline := getenv(EnvConfig), getenv(EnvConfigYAML)
	switch {
	case path != "" && inline != "":
		return config.Config{}, fmt.Errorf("%w: set %s or %s, not both", config.ErrInvalid, EnvConfig, EnvConfigYAML)
	case path != "":
		return config.Load(path)
	case inline != "":
		c, err := config.Parse([]byte(inline))
		if err != nil {
			return config.Config{}, fmt.Errorf("%s: %w", EnvConfigYAML, err)
		}
		return c, nil
	}
	return config.Default(), nil
}
