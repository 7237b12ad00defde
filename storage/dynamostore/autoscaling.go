package dynamostore

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	aas "github.com/aws/aws-sdk-go-v2/service/applicationautoscaling"
	aastypes "github.com/aws/aws-sdk-go-v2/service/applicationautoscaling/types"

	"github.com/timetabledb/timetable/storage"
)

// AutoScaler is the part of Application Auto Scaling the store calls to
// auto scale a provisioned table between a floor and a peak
// (storage.Capacity.Read/Write and MaxRead/MaxWrite). The SDK's
// *applicationautoscaling.Client implements it; dynamofault.AutoScaling
// records the calls in tests, as no local server has the service.
type AutoScaler interface {
	RegisterScalableTarget(ctx context.Context, in *aas.RegisterScalableTargetInput, optFns ...func(*aas.Options)) (*aas.RegisterScalableTargetOutput, error)
	PutScalingPolicy(ctx context.Context, in *aas.PutScalingPolicyInput, optFns ...func(*aas.Options)) (*aas.PutScalingPolicyOutput, error)
	DeregisterScalableTarget(ctx context.Context, in *aas.DeregisterScalableTargetInput, optFns ...func(*aas.Options)) (*aas.DeregisterScalableTargetOutput, error)
}

// TargetUtilization is the consumed share of provisioned capacity that
// the target-tracking policies keep a table at, in percent: the
// DynamoDB console's default.
const TargetUtilization = 70

// autoScaled reports whether capacity c is auto scaled: provisioned, with
// a peak.
func autoScaled(c storage.Capacity) bool {
	return c.Billing == storage.Provisioned && (c.MaxRead > 0 || c.MaxWrite > 0)
}

// dimension is one of a table's two scalable dimensions.
type dimension struct {
	dim      aastypes.ScalableDimension
	metric   aastypes.MetricType
	min, max int64
}

func dimensions(c storage.Capacity) []dimension {
	return []dimension{
		{aastypes.ScalableDimensionDynamoDBTableReadCapacityUnits, aastypes.MetricTypeDynamoDBReadCapacityUtilization, c.Read, max(c.MaxRead, c.Read)},
		{aastypes.ScalableDimensionDynamoDBTableWriteCapacityUnits, aastypes.MetricTypeDynamoDBWriteCapacityUtilization, c.Write, max(c.MaxWrite, c.Write)},
	}
}

// scale registers the table's scalable targets, floor to peak, and a
// target-tracking policy on each (Application Auto Scaling,
// "Managing throughput capacity automatically with DynamoDB auto
// scaling"). Registering again updates them, so it is idempotent. A
// store without an AutoScaler logs that the table is not auto scaled.
func (s *Store) scale(ctx context.Context, name string, c storage.Capacity) error {
	if s.opts.AutoScaling == nil {
		s.log.Warn("dynamodb: no Application Auto Scaling client; the table keeps its floor capacity", "table", name)
		return nil
	}
	for _, d := range dimensions(c) {
		err := s.controlCall(ctx, "RegisterScalableTarget", func(ctx context.Context) error {
			_, err := s.opts.AutoScaling.RegisterScalableTarget(ctx, &aas.RegisterScalableTargetInput{
				ServiceNamespace: aastypes.ServiceNamespaceDynamodb, ResourceId: aws.String("table/" + name), ScalableDimension: d.dim,
				MinCapacity: aws.Int32(int32(d.min)), MaxCapacity: aws.Int32(int32(d.max)),
			})
			return err
		})
		if err != nil {
			return fmt.Errorf("register scalable target %s: %w", d.dim, err)
		}
		err = s.controlCall(ctx, "PutScalingPolicy", func(ctx context.Context) error {
			_, err := s.opts.AutoScaling.PutScalingPolicy(ctx, &aas.PutScalingPolicyInput{
				ServiceNamespace: aastypes.ServiceNamespaceDynamodb, ResourceId: aws.String("table/" + name), ScalableDimension: d.dim,
				PolicyName: aws.String("timetable-" + string(d.metric)), PolicyType: aastypes.PolicyTypeTargetTrackingScaling,
				TargetTrackingScalingPolicyConfiguration: &aastypes.TargetTrackingScalingPolicyConfiguration{
					TargetValue:                   aws.Float64(TargetUtilization),
					PredefinedMetricSpecification: &aastypes.PredefinedMetricSpecification{PredefinedMetricType: d.metric},
				},
			})
			return err
		})
		if err != nil {
			return fmt.Errorf("put scaling policy %s: %w", d.dim, err)
		}
	}
	return nil
}

// unscale deregisters the table's scalable targets (and so their
// policies); a target not registered is not an error.
func (s *Store) unscale(ctx context.Context, name string) error {
	if s.opts.AutoScaling == nil {
		return nil
	}
	for _, d := range dimensions(storage.Capacity{}) {
		err := s.controlCall(ctx, "DeregisterScalableTarget", func(ctx context.Context) error {
			_, err := s.opts.AutoScaling.DeregisterScalableTarget(ctx, &aas.DeregisterScalableTargetInput{
				ServiceNamespace: aastypes.ServiceNamespaceDynamodb, ResourceId: aws.String("table/" + name), ScalableDimension: d.dim,
			})
			return err
		})
		var nf *aastypes.ObjectNotFoundException
		if err != nil && !errors.As(err, &nf) {
			return fmt.Errorf("deregister scalable target %s: %w", d.dim, err)
		}
	}
	return nil
}
