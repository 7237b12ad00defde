package planner

import (
	"fmt"
	"math"

	"github.com/timetabledb/timetable/storage"
)

// Prices are what DynamoDB and S3 charge, in one currency. Field names
// follow the AWS price list; JSON and YAML price files use the tags. The
// _ia prices are the Standard-Infrequent Access table class's.
// PriceTable says where each built-in price comes from.
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
	// PITRGBMonth is the price of point-in-time recovery (continuous
	// backups) of one GB of table for one month.
	PITRGBMonth float64 `json:"pitr_gb_month" yaml:"pitr_gb_month"`
	// ExportGB and ImportGB are the prices of DynamoDB's export of one GB
	// of table to S3 (a full export) and of its import of one GB from S3.
	ExportGB float64 `json:"export_gb" yaml:"export_gb"`
	ImportGB float64 `json:"import_gb" yaml:"import_gb"`
	// S3PutThousand and S3GetThousand are S3 Standard's prices of a
	// thousand PUT (COPY, POST, LIST) and a thousand GET requests.
	S3PutThousand float64 `json:"s3_put_thousand" yaml:"s3_put_thousand"`
	S3GetThousand float64 `json:"s3_get_thousand" yaml:"s3_get_thousand"`
	// FreeStorageGB, FreeWCU and FreeRCU are DynamoDB's free tier, per
	// account and region, every month: GB stored and provisioned
	// capacity units, Standard table class.
	FreeStorageGB float64 `json:"free_storage_gb" yaml:"free_storage_gb"`
	FreeWCU       float64 `json:"free_wcu" yaml:"free_wcu"`
	FreeRCU       float64 `json:"free_rcu" yaml:"free_rcu"`
	// ReservedWCUUpfront and ReservedWCUHour are the upfront payment and
	// the hourly price of a block of 100 write capacity units of reserved
	// capacity for ReservedTermMonths (the one-year term);
	// ReservedRCUUpfront and ReservedRCUHour the same for 100 read
	// capacity units. Reserved capacity covers provisioned Standard-class
	// capacity only.
	ReservedWCUUpfront float64 `json:"reserved_wcu_upfront" yaml:"reserved_wcu_upfront"`
	ReservedWCUHour    float64 `json:"reserved_wcu_hour" yaml:"reserved_wcu_hour"`
	ReservedRCUUpfront float64 `json:"reserved_rcu_upfront" yaml:"reserved_rcu_upfront"`
	ReservedRCUHour    float64 `json:"reserved_rcu_hour" yaml:"reserved_rcu_hour"`
	ReservedTermMonths float64 `json:"reserved_term_months" yaml:"reserved_term_months"`
	// The same four prices for the three-year term (ReservedLongTermMonths),
	// which AWS offers in some regions only: all four zero means none.
	ReservedWCUUpfront3y float64 `json:"reserved_wcu_upfront_3y" yaml:"reserved_wcu_upfront_3y"`
	ReservedWCUHour3y    float64 `json:"reserved_wcu_hour_3y" yaml:"reserved_wcu_hour_3y"`
	ReservedRCUUpfront3y float64 `json:"reserved_rcu_upfront_3y" yaml:"reserved_rcu_upfront_3y"`
	ReservedRCUHour3y    float64 `json:"reserved_rcu_hour_3y" yaml:"reserved_rcu_hour_3y"`
}

// ReservedLongTermMonths is the length of reserved capacity's three-year
// term.
const ReservedLongTermMonths = 36

// PriceInfo is one built-in price: its key (the price file's), value,
// unit, the page it was read from and whether the stored copy of that
// page (the search library this project is checked against) shows it.
type PriceInfo struct {
	Key   string  `json:"key"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// Source is AWS's page of the price.
	Source string `json:"source"`
	// Check is "verified PAGE" when the stored copy of PAGE shows the
	// price, or "unverified" when no AWS page held it (third-party pages
	// that quote it are named in Note).
	Check string `json:"check"`
	Note  string `json:"note,omitempty"`
}

// AWS's pages the prices come from.
const (
	dynamoPricingPage      = "https://aws.amazon.com/dynamodb/pricing/"
	dynamoProvisionedPage  = "https://aws.amazon.com/dynamodb/pricing/provisioned/"
	dynamoOnDemandPage     = "https://aws.amazon.com/dynamodb/pricing/on-demand/"
	s3PricingPage          = "https://aws.amazon.com/s3/pricing/"
	unverified             = "unverified"
	verifiedDynamoPricing  = "verified " + dynamoPricingPage
	dynamoReservedGuide    = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/reserved-capacity.html"
	chinaRatio             = "Standard-IA throughput is 1.25 times Standard's on AWS's China-regions page (https://www.amazonaws.cn/en/dynamodb/pricing/), the ratio of these figures"
	provisionedPageNoTable = "the stored copy of the provisioned-capacity page holds its key terms, not its price table"
)

// PriceTable is the one table of built-in prices: DynamoDB's us-east-1
// (US East, N. Virginia) list prices for both table classes in effect
// from 2024-11-01 (when on-demand prices were halved), S3 Standard's,
// and reserved capacity's one- and three-year terms. Written 2026-11-26, checked
// against the stored copies of AWS's pages 2026-12-07: only what a copy
// shows is marked verified; the rest is a starting point, not a quote,
// and a price file or flags override it. The bill prints each line's
// check.
var PriceTable = []PriceInfo{
	{"wcu_hour", 0.00065, "WCU-hour", dynamoProvisionedPage, unverified, provisionedPageNoTable},
	{"rcu_hour", 0.00013, "RCU-hour", dynamoProvisionedPage, unverified, provisionedPageNoTable},
	{"write_request_million", 0.625, "million write request units", dynamoOnDemandPage, unverified, "quoted for US East after the November 2024 cut by third-party pages (airbyte.com), not by a stored AWS page"},
	{"read_request_million", 0.125, "million read request units", dynamoOnDemandPage, unverified, "quoted for US East after the November 2024 cut by third-party pages (airbyte.com), not by a stored AWS page"},
	{"storage_gb_month", 0.25, "GB-month", dynamoPricingPage, verifiedDynamoPricing, "\"The first 25 GB consumed per month is free, and prices start from $0.25 per GB-month thereafter\""},
	{"wcu_hour_ia", 0.00081, "WCU-hour", dynamoProvisionedPage, unverified, chinaRatio},
	{"rcu_hour_ia", 0.00016, "RCU-hour", dynamoProvisionedPage, unverified, chinaRatio},
	{"write_request_million_ia", 0.78125, "million write request units", dynamoOnDemandPage, unverified, chinaRatio},
	{"read_request_million_ia", 0.155, "million read request units", dynamoOnDemandPage, unverified, chinaRatio},
	{"storage_gb_month_ia", 0.10, "GB-month", dynamoPricingPage, unverified, ""},
	{"archive_gb_month", 0.023, "GB-month", s3PricingPage, unverified, "S3 Standard, first 50 TB a month; quoted by third-party pages, not by a stored AWS page"},
	{"pitr_gb_month", 0.20, "GB-month", dynamoPricingPage, unverified, "billed on table size whatever the recovery period (developer guide, PointInTimeRecovery_Howitworks); the price is quoted by third-party pages"},
	{"export_gb", 0.10, "GB", dynamoPricingPage, unverified, "full export to S3, billed on the table's size at the export time"},
	{"import_gb", 0.15, "GB", dynamoPricingPage, unverified, "import from S3, billed on the uncompressed source size"},
	{"s3_put_thousand", 0.005, "1,000 requests", s3PricingPage, unverified, "PUT, COPY, POST, LIST; quoted by third-party pages"},
	{"s3_get_thousand", 0.0004, "1,000 requests", s3PricingPage, unverified, "GET, SELECT; quoted by third-party pages"},
	{"free_storage_gb", 25, "GB", dynamoPricingPage, verifiedDynamoPricing, "free tier: \"25 GB per month of data storage\", does not expire"},
	{"free_wcu", 25, "WCU", dynamoPricingPage, verifiedDynamoPricing, "free tier: \"through 25 write capacity units and 25 read capacity units\""},
	{"free_rcu", 25, "RCU", dynamoPricingPage, verifiedDynamoPricing, "free tier: \"through 25 write capacity units and 25 read capacity units\""},
	// Reserved capacity. The developer guide's page (stored in its
	// Japanese copy, ja_jp/amazondynamodb/latest/developerguide/
	// reserved-capacity.html) says how it is bought: for provisioned
	// tables of the Standard class only (not Standard-IA, not on demand),
	// "in allocations of 100 WCU or 100 RCU", for a one-year term, or a
	// three-year term in limited regions, with "a one-time partial upfront
	// payment" and a discounted hourly rate for the committed usage,
	// paid whatever is used, saving "up to 54%" (one year) and "up to
	// 77%" (three years) off the standard rates. No stored AWS page holds
	// the dollar figures below; they are the us-east-1 figures quoted for
	// the provisioned-capacity page, and they reproduce the guide's
	// percentages against wcu_hour and rcu_hour: (150/8,760 + 0.0128)/100
	// = 0.000299 a WCU-hour, 54% off 0.00065; (180/26,280 + 0.0081)/100 =
	// 0.000150, 77% off; the RCU figures 54% and 77% off 0.00013.
	{"reserved_wcu_upfront", 150, "100 WCU, upfront", dynamoProvisionedPage, unverified, "one-year term, partial upfront, blocks of 100 units, Standard class only (" + dynamoReservedGuide + "); 54% off wcu_hour with reserved_wcu_hour, the guide's \"up to 54%\""},
	{"reserved_wcu_hour", 0.0128, "100 WCU-hour", dynamoProvisionedPage, unverified, "one-year term"},
	{"reserved_rcu_upfront", 30, "100 RCU, upfront", dynamoProvisionedPage, unverified, "one-year term; 54% off rcu_hour with reserved_rcu_hour"},
	{"reserved_rcu_hour", 0.0025, "100 RCU-hour", dynamoProvisionedPage, unverified, "one-year term"},
	{"reserved_term_months", 12, "months", dynamoProvisionedPage, unverified, "the one-year term"},
	{"reserved_wcu_upfront_3y", 180, "100 WCU, upfront", dynamoProvisionedPage, unverified, "three-year term, offered in limited regions; 77% off wcu_hour with reserved_wcu_hour_3y, the guide's \"up to 77%\""},
	{"reserved_wcu_hour_3y", 0.0081, "100 WCU-hour", dynamoProvisionedPage, unverified, "three-year term"},
	{"reserved_rcu_upfront_3y", 36, "100 RCU, upfront", dynamoProvisionedPage, unverified, "three-year term; 77% off rcu_hour with reserved_rcu_hour_3y"},
	{"reserved_rcu_hour_3y", 0.0016, "100 RCU-hour", dynamoProvisionedPage, unverified, "three-year term"},
}

// field returns the price of key, or nil for no such key.
func (p *Prices) field(key string) *float64 {
	switch key {
	case "wcu_hour":
		return &p.WCUHour
	case "rcu_hour":
		return &p.RCUHour
	case "write_request_million":
		return &p.WriteRequestMillion
	case "read_request_million":
		return &p.ReadRequestMillion
	case "storage_gb_month":
		return &p.StorageGBMonth
	case "wcu_hour_ia":
		return &p.WCUHourIA
	case "rcu_hour_ia":
		return &p.RCUHourIA
	case "write_request_million_ia":
		return &p.WriteRequestMillionIA
	case "read_request_million_ia":
		return &p.ReadRequestMillionIA
	case "storage_gb_month_ia":
		return &p.StorageGBMonthIA
	case "archive_gb_month":
		return &p.ArchiveGBMonth
	case "pitr_gb_month":
		return &p.PITRGBMonth
	case "export_gb":
		return &p.ExportGB
	case "import_gb":
		return &p.ImportGB
	case "s3_put_thousand":
		return &p.S3PutThousand
	case "s3_get_thousand":
		return &p.S3GetThousand
	case "free_storage_gb":
		return &p.FreeStorageGB
	case "free_wcu":
		return &p.FreeWCU
	case "free_rcu":
		return &p.FreeRCU
	case "reserved_wcu_upfront":
		return &p.ReservedWCUUpfront
	case "reserved_wcu_hour":
		return &p.ReservedWCUHour
	case "reserved_rcu_upfront":
		return &p.ReservedRCUUpfront
	case "reserved_rcu_hour":
		return &p.ReservedRCUHour
	case "reserved_term_months":
		return &p.ReservedTermMonths
	case "reserved_wcu_upfront_3y":
		return &p.ReservedWCUUpfront3y
	case "reserved_wcu_hour_3y":
		return &p.ReservedWCUHour3y
	case "reserved_rcu_upfront_3y":
		return &p.ReservedRCUUpfront3y
	case "reserved_rcu_hour_3y":
		return &p.ReservedRCUHour3y
	}
	return nil
}

// DefaultPrices returns the built-in prices, PriceTable's values, with a
// label naming their region and date.
func DefaultPrices() Prices {
	p := Prices{
		Label:    "us-east-1 list prices, DynamoDB in effect from 2024-11-01, S3 Standard (built-in defaults of 2026-11-26, each line's check in the bill; see https://aws.amazon.com/dynamodb/pricing/ and https://aws.amazon.com/s3/pricing/)",
		Currency: "USD",
	}
	for _, e := range PriceTable {
		*p.field(e.Key) = e.Value
	}
	return p
}

// Check returns what is known of price key's value in p: the built-in
// table's check ("verified PAGE" or "unverified") when p holds the
// built-in value, and "given" when a price file or flag changed it.
func (p Prices) Check(key string) string {
	v := p.field(key)
	for _, e := range PriceTable {
		if e.Key == key {
			if v != nil && *v == e.Value {
				return e.Check
			}
			return "given"
		}
	}
	return unverified
}

// classPrices are one table class's prices and their keys.
type classPrices struct {
	wcuHour, rcuHour, writeMillion, readMillion, storageGBMonth float64
	// suffix is the keys' suffix: "" or "_ia".
	suffix string
}

// class returns the prices of a table class.
func (p Prices) class(c storage.Class) classPrices {
	if c == storage.ClassInfrequentAccess {
		return classPrices{p.WCUHourIA, p.RCUHourIA, p.WriteRequestMillionIA, p.ReadRequestMillionIA, p.StorageGBMonthIA, "_ia"}
	}
	return classPrices{p.WCUHour, p.RCUHour, p.WriteRequestMillion, p.ReadRequestMillion, p.StorageGBMonth, ""}
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
	for _, e := range PriceTable {
		v := *p.field(e.Key)
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: price %s is %v", ErrInvalidInput, e.Key, v)
		}
	}
	return nil
}
