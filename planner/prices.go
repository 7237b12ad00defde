package planner

import (
	"fmt"
	"math"
)

// Prices are what DynamoDB charges, in one currency. Field names follow
// the AWS price list; JSON and YAML price files use the tags.
type Prices struct {
	// Label says where the prices come from and when they were right.
	Label string `json:"label" yaml:"label"`
	// Currency is the currency of every price, e.g. "USD".
	Currency string `json:"currency" yaml:"currency"`
	// WCUHour and RCUHour are the prices of one provisioned write or read
	// capacity unit for one hour.
	WCUHour float64 `json:"wcu_hour" yaml:"wcu_hour"`
	RCUHour float64 `json:"rcu_hour" yaml:"rcu_hour"`
	// WriteRequestMillion and ReadRequestMillion are the on-demand prices
	// of one million write or read request units.
	WriteRequestMillion float64 `json:"write_request_million" yaml:"write_request_million"`
	ReadRequestMillion  float64 `json:"read_request_million" yaml:"read_request_million"`
	// StorageGBMonth is the price of storing one GB (2^30 bytes, as AWS
	// bills it) for one month.
	StorageGBMonth float64 `json:"storage_gb_month" yaml:"storage_gb_month"`
}

// DefaultPrices returns the built-in prices: DynamoDB list prices in
// us-east-1 for the Standard table class, in effect from 2024-11-01 (the
// on-demand price cut) and the latest known when this table was written.
// They are a starting point, not a quote: the label says so, and a price
// file or flags override them.
func DefaultPrices() Prices {
	return Prices{
		Label:               "us-east-1 Standard table class list prices in effect from 2024-11-01 (built-in defaults; check https://aws.amazon.com/dynamodb/pricing/)",
		Currency:            "USD",
		WCUHour:             0.00065,
		RCUHour:             0.00013,
		WriteRequestMillion: 0.625,
		ReadRequestMillion:  0.125,
		StorageGBMonth:      0.25,
	}
}

// Validate reports a negative or non-finite price.
func (p Prices) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"wcu_hour", p.WCUHour},
		{"rcu_hour", p.RCUHour},
		{"write_request_million", p.WriteRequestMillion},
		{"read_request_million", p.ReadRequestMillion},
		{"storage_gb_month", p.StorageGBMonth},
	} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%w: price %s is %v", ErrInvalidInput, f.name, f.v)
		}
	}
	return nil
}
