package dynamofault

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	aas "github.com/aws/aws-sdk-go-v2/service/applicationautoscaling"
	aastypes "github.com/aws/aws-sdk-go-v2/service/applicationautoscaling/types"
)

// AutoScaling is a recording fake of Application Auto Scaling, which no
// local DynamoDB server has: it implements dynamostore.AutoScaler, keeps
// the scalable targets and policies registered, and answers as the
// service does (ValidationException for a target outside DynamoDB's
// rules, ObjectNotFoundException for deregistering an unknown target).
// It may be used by any number of goroutines at once.
type AutoScaling struct {
	mu struct {
		sync.Mutex
		targets map[ScalableTarget]Scaling
		calls   map[string]int
	}
}

// ScalableTarget names a scalable target: "table/NAME" and a dimension
// such as "dynamodb:table:WriteCapacityUnits".
type ScalableTarget struct {
	ResourceID, Dimension string
}

// Scaling is what is registered for a target.
type Scaling struct {
	Min, Max int32
	// Policy is the target-tracking policy's name and target value; ""
	// until PutScalingPolicy.
	Policy      string
	TargetValue float64
}

// NewAutoScaling returns an AutoScaling with nothing registered.
func NewAutoScaling() *AutoScaling {
	a := &AutoScaling{}
	a.mu.targets = map[ScalableTarget]Scaling{}
	a.mu.calls = map[string]int{}
	return a
}

// Targets returns what is registered.
func (a *AutoScaling) Targets() map[ScalableTarget]Scaling {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[ScalableTarget]Scaling, len(a.mu.targets))
	for k, v := range a.mu.targets {
		out[k] = v
	}
	return out
}

// Calls returns how many times each operation was called.
func (a *AutoScaling) Calls() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]int, len(a.mu.calls))
	for k, v := range a.mu.calls {
		out[k] = v
	}
	return out
}

// RegisterScalableTarget registers or updates a target.
func (a *AutoScaling) RegisterScalableTarget(_ context.Context, in *aas.RegisterScalableTargetInput, _ ...func(*aas.Options)) (*aas.RegisterScalableTargetOutput, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mu.calls["RegisterScalableTarget"]++
	if in.ServiceNamespace != aastypes.ServiceNamespaceDynamodb {
		return nil, &aastypes.ValidationException{Message: aws.String("unsupported service namespace")}
	}
	lo, hi := aws.ToInt32(in.MinCapacity), aws.ToInt32(in.MaxCapacity)
	if lo < 1 || hi < lo {
		return nil, &aastypes.ValidationException{Message: aws.String(fmt.Sprintf("Minimum capacity %d and maximum capacity %d: the minimum must be at least 1 and at most the maximum", lo, hi))}
	}
	k := ScalableTarget{aws.ToString(in.ResourceId), string(in.ScalableDimension)}
	s := a.mu.targets[k]
	s.Min, s.Max = lo, hi
	a.mu.targets[k] = s
	return &aas.RegisterScalableTargetOutput{}, nil
}

// PutScalingPolicy puts a target-tracking policy on a registered target.
func (a *AutoScaling) PutScalingPolicy(_ context.Context, in *aas.PutScalingPolicyInput, _ ...func(*aas.Options)) (*aas.PutScalingPolicyOutput, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mu.calls["PutScalingPolicy"]++
	k := ScalableTarget{aws.ToString(in.ResourceId), string(in.ScalableDimension)}
	s, ok := a.mu.targets[k]
	if !ok {
		return nil, &aastypes.ObjectNotFoundException{Message: aws.String("No scalable target registered for service namespace: dynamodb, resource ID: " + k.ResourceID + ", scalable dimension: " + k.Dimension)}
	}
	if in.PolicyType != aastypes.PolicyTypeTargetTrackingScaling || in.TargetTrackingScalingPolicyConfiguration == nil {
		return nil, &aastypes.ValidationException{Message: aws.String("a target-tracking policy needs its configuration")}
	}
	s.Policy, s.TargetValue = aws.ToString(in.PolicyName), aws.ToFloat64(in.TargetTrackingScalingPolicyConfiguration.TargetValue)
	a.mu.targets[k] = s
	return &aas.PutScalingPolicyOutput{PolicyARN: aws.String("arn:aws:autoscaling:policy/" + s.Policy)}, nil
}

// DeregisterScalableTarget removes a target and its policies.
func (a *AutoScaling) DeregisterScalableTarget(_ context.Context, in *aas.DeregisterScalableTargetInput, _ ...func(*aas.Options)) (*aas.DeregisterScalableTargetOutput, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mu.calls["DeregisterScalableTarget"]++
	k := ScalableTarget{aws.ToString(in.ResourceId), string(in.ScalableDimension)}
	if _, ok := a.mu.targets[k]; !ok {
		return nil, &aastypes.ObjectNotFoundException{Message: aws.String("No scalable target found for service namespace: dynamodb, resource ID: " + k.ResourceID + ", scalable dimension: " + k.Dimension)}
	}
	delete(a.mu.targets, k)
	return &aas.DeregisterScalableTargetOutput{}, nil
}
