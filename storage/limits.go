package storage

// DynamoDB's limits on items. Every backend refuses what breaks them, and
// package event refuses events that would break them before any backend
// sees one, so that a request is accepted or refused whole: these
// constants are the one place the numbers live.
//
// They are the limits the DynamoDB Developer Guide documents in
// "Constraints in Amazon DynamoDB" (docs.aws.amazon.com/amazondynamodb/
// latest/developerguide/Constraints.html) and "Supported data types and
// naming rules" (HowItWorks.NamingRulesDataTypes.html). Where the guide
// leaves a boundary open, it was settled against DynamoDB Local, which is
// built from DynamoDB's own code; dynalite is more lenient on names and
// nesting, and never the reference.
const (
	// MaxItemSize is the largest item DynamoDB stores: 400 KB, a KB being
	// 1024 bytes, counting attribute names and values as ItemSize does.
	MaxItemSize = 400 * 1024

	// MaxPKBytes is the longest partition key value, and MaxSKBytes the
	// longest sort key value, in UTF-8 bytes. Both are at least 1 byte.
	MaxPKBytes = 2048
	MaxSKBytes = 1024

	// MaxNameBytes is the longest attribute name, in UTF-8 bytes; the
	// guide says names are "at least one character long and less than
	// 64 KB". DynamoDB applies the same rule to the keys of a map
	// (DynamoDB Local answers an empty one with "Empty attribute name").
	MaxNameBytes = 64*1024 - 1

	// MaxDepth is how deep an attribute value may nest, in DynamoDB's
	// count of levels: an attribute is level 1, and the elements of a
	// list or map are one level below it. A scalar may sit at level 32,
	// so a value holds at most 31 lists and maps one inside another; a
	// list or map at level 32 is refused even when empty, as DynamoDB
	// Local refuses it ("Nesting Levels have exceeded supported limits").
	// Depth measures a value in these levels.
	MaxDepth = 32

	// MaxNumberDigits is the most significant digits a number may have.
	MaxNumberDigits = 38

	// MaxNumberExponent and MinNumberExponent bound the power of ten of a
	// nonzero number's first significant digit, so that the magnitudes
	// DynamoDB stores run from 1E-130 to
	// 9.9999999999999999999999999999999999999E+125, for negative numbers
	// as for positive ones.
	MaxNumberExponent = 125
	MinNumberExponent = -130
)

// DefaultTableQuota is DynamoDB's default quota of tables per account and
// region, "Table count for this account" in Service Quotas: 2,500, which
// AWS raises on request up to 10,000. Every tenant of a store shares it.
const DefaultTableQuota = 2500
