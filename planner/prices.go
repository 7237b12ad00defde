package planner

import (
	"fmt"
	"math"

	"github.com/timetabledb/timetable/storage"
)

// Prices are what DynamoDB and S3 charge, in one currency. Field names
// follow the AWS price list; JSON and YAML price files use the tags. The
// _ia prices are the Standard-Infrequent Access table class's.
type Prices struct {
	// Label says where the prices come from and when they were right.
	Label string `json:"label" yaml:"label"`
	// Currency is the currency of every price, e.g. "USD".
	Currency string `json:"currency" yaml:"currency"`
	// WCUHour and RCUHour are the prices of one provisioned write or read
	// capacity unit for one hour, Standard table class.
	WCUHour float64 `json:"wcu_hour" yaml:"wcu_hour"`
	RCUHour float64 `json:"rcu_hour" yaml:"rcu_hour"`
	// WriteRequestMillion and ReadRequestMillion are the on-demand prices
	// of one million write or read request units, Standard table class.
	WriteRequestMillion float64 `json:"write_request_million" yaml:"write_request_million"`
	ReadRequestMillion  float64 `json:"read_request_million" yaml:"read_request_million"`
	// StorageGBMonth is the price of storing one GB (2^30 bytes, as AWS
	// bills it) for one month in a Standard table.
	StorageGBMonth float64 `json:"storage_gb_month" yaml:"storage_gb_month"`
	// The same five prices for the Standard-IA table class.
	WCUHourIA             float64 `json:"wcu_hour_ia" yaml:"wcu_hour_ia"`
	RCUHourIA             float64 `json:"rcu_hour_ia" yaml:"rcu_hour_ia"`
	WriteRequestMillionIA float64 `json:"write_request_million_ia" yaml:"write_request_million_ia"`
	ReadRequestMillionIA  float64 `json:"read_request_million_ia" yaml:"read_request_million_ia"`
	StorageGBMonthIA      float64 `json:"storage_gb_month_ia" yaml:"storage_gb_month_ia"`
	// ArchiveGBMonth is the price of storing one GB of archives for one
	// month: S3 Standard.
	ArchiveGBMonth float64 `json:"archive_gb_month" yaml:"archive_gb_month"`
}

// DefaultPrices returns the built-in prices, the one table of prices in
// timetable. They are list prices in us-east-1 (US East, N. Virginia):
//
//	                        provisioned (hour)   on demand (million)   storage
//	                        WCU      RCU         write    read         GB-month
//	DynamoDB Standard       0.00065  0.00013     0.625    0.125        0.25
//	DynamoDB Standard-IA    0.00081  0.00016     0.78125  0.155        0.10
//	S3 Standard (first 50 TB)                                          0.023
//
// Sources: "Amazon DynamoDB pricing for on-demand capacity" and "for
// provisioned capacity" (https://aws.amazon.com/dynamodb/pricing/), in
// effect from 2024-11-01, when on-demand prices were halved; "Amazon S3
// pricing" (https://aws.amazon.com/s3/pricing/). Written 2026-11-26. They
// are a starting point, not a quote: the label says so, and a price file
// or flags override them. The first 25 GB a month that DynamoDB stores
// free are not deducted.
//
// Checked on 2026-11-26 against the stored copies of those pages, which
// hold their key terms but not their price tables: "Amazon DynamoDB
// pricing" (overview) gives Standard storage from 0.25 USD a GB-month
// after 25 GB free; secondary pages give the on-demand Standard request
// prices (0.625 and 0.125 USD a million, US East) and S3 Standard's
// 0.023 USD a GB-month for the first 50 TB; the China regions' page
// prices Standard-IA throughput at 1.25 times Standard's, as above. The
// provisioned unit-hour prices and the Standard-IA column are unverified
// there (docs/operations.md says so too).
func DefaultPrices() Prices {
	return Prices{
		Label:                 "us-east-1 list prices, DynamoDB in effect from 2024-11-01, S3 Standard (built-in defaults of 2026-11-26; check https://aws.amazon.com/dynamodb/pricing/ and https://aws.amazon.com/s3/pricing/)",
		Currency:              "USD",
		WCUHour:               0.00065,
		RCUHour:               0.00013,
		WriteRequestMillion:   0.625,
		ReadRequestMillion:    0.125,
		StorageGBMonth:        0.25,
		WCUHourIA:             0.00081,
		RCUHourIA:             0.00016,
		WriteRequestMillionIA: 0.78125,
		ReadRequestMillionIA:  0.155,
		StorageGBMonthIA:      0.10,
		ArchiveGBMonth:        0.023,
	}
}

// classPrices are one table class's prices.
type classPrices struct {
	wcuHour, rcuHour, writeMillion, readMillion, storageGBMonth float64
}

// class returns the prices of a table class.
func (p Prices) class(c storage.Class) classPrices {
	if c == storage.ClassInfrequentAccess {
		return classPrices{p.WCUHourIA, p.RCUHourIA, p.WriteRequestMillionIA, p.ReadRequestMillionIA, p.StorageGBMonthIA}
	}
	return classPrices{p.WCUHour, p.RCUHour, p.WriteRequestMillion, p.ReadRequestMillion, p.StorageGBMonth}
}

// BreakEven returns the utilisation of provisioned write capacity above
// which provisioned billing is cheaper than on demand in a table class:
// the price of a write capacity unit for an hour over the on-demand price
// of the 3,600 write request units it could serve in that hour. At the
// built-in Standard prices it is 0.00065 / (3,600 × 0.625 / 10^6) = 28.9%.
func (p Prices) BreakEven(class storage.Class) float64 {
	c := p.class(class)
	if c.writeMillion == 0 {
		return math.Inf(1)
	}
	return c.wcuHour / (3600 * c.writeMillion / 1e6)
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
		{"wcu_hour_ia", p.WCUHourIA},
		{"rcu_hour_ia", p.RCUHourIA},
		{"write_request_million_ia", p.WriteRequestMillionIA},
		{"read_request_million_ia", p.ReadRequestMillionIA},
		{"storage_gb_month_ia", p.StorageGBMonthIA},
		{"archive_gb_month", p.ArchiveGBMonth},
	} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%w: price %s is %v", ErrInvalidInput, f.name, f.v)
		}
	}
	return nil
}
