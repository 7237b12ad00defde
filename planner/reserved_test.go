package planner

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The built-in reserved prices take the developer guide's "up to 54%"
// (one year) and "up to 77%" (three years) off the provisioned prices,
// the upfront payment spread over the term.
func TestReservedPricesMatchTheGuide(t *testing.T) {
	p := DefaultPrices()
	perUnitHour := func(upfront, hourly, months float64) float64 {
		return (upfront/(months*hoursPerMonth) + hourly) / 100
	}
	for _, tc := range []struct {
		name                 string
		upfront, hourly      float64
		months, list, saving float64
	}{
		{"wcu 1y", p.ReservedWCUUpfront, p.ReservedWCUHour, p.ReservedTermMonths, p.WCUHour, 0.54},
		{"rcu 1y", p.ReservedRCUUpfront, p.ReservedRCUHour, p.ReservedTermMonths, p.RCUHour, 0.54},
		{"wcu 3y", p.ReservedWCUUpfront3y, p.ReservedWCUHour3y, ReservedLongTermMonths, p.WCUHour, 0.77},
		{"rcu 3y", p.ReservedRCUUpfront3y, p.ReservedRCUHour3y, ReservedLongTermMonths, p.RCUHour, 0.77},
	} {
		got := 1 - perUnitHour(tc.upfront, tc.hourly, tc.months)/tc.list
		require.InDelta(t, tc.saving, got, 0.006, tc.name)
	}
}

// Reserved capacity covers the hot tier's steady write capacity in
// blocks of 100, for the term within the horizon that saves the most,
// beside the recommended bill, each layout's and chunks packed later;
// it is not in their totals.
func TestReservedCapacity(t *testing.T) {
	base := Input{ItemBytes: 180, Rate: 600, Retention: 365 * day, ArchiveAfter: 30 * day, ArchiveTarget: "s3://bucket/events"}
	r, err := Plan(base)
	require.NoError(t, err)
	p := DefaultPrices()
	rs := r.Bill.Reserved
	require.NotNil(t, rs)
	require.Equal(t, int64(858), r.Tiers[0].Write, "600 write units at the 70% target")
	require.Equal(t, int64(800), rs.WCU, "whole blocks of 100 under the steady 858")
	require.Zero(t, rs.RCU)
	require.Equal(t, 12.0, rs.TermMonths, "a year's horizon weighs the one-year term alone")
	require.InDelta(t, 8*p.ReservedWCUUpfront, rs.Upfront, 1e-9)
	require.InDelta(t, 8*p.ReservedWCUHour*hoursPerMonth+rs.Upfront/12, rs.Monthly, 1e-9)
	require.InDelta(t, 800*p.WCUHour*hoursPerMonth, rs.Replaces, 1e-9)
	require.InDelta(t, r.Bill.Total-(rs.Replaces-rs.Monthly), rs.Total, 1e-9)
	require.InDelta(t, rs.Upfront+8*p.ReservedWCUHour*hoursPerMonth*12, rs.Commitment, 1e-9)
	require.Equal(t, r.Cost.Recommended.Total, r.Bill.Total, "a commitment is not in the total")
	require.Equal(t, "buy 800 reserved WCU for 1 year ($1,200.00 upfront, then $74.75 a month)", rs.Buy("USD"))
	for _, l := range r.Layouts {
		require.NotNil(t, l.Reserved, l.Event.Layout)
		require.InDelta(t, l.Total-l.Reserved.Saves, l.Reserved.Total, 1e-9)
	}

	// Chunks packed later keep the rows' hot tier, and so its
	// reservation: the guide's stream written one at a time comes within
	// the aim of 330 USD a month with it.
	packed := r.PackedLater.Bill.Reserved
	require.NotNil(t, packed)
	require.Equal(t, rs.WCU, packed.WCU)
	require.InDelta(t, r.PackedLater.Bill.Total-packed.Saves, packed.Total, 1e-9)
	require.LessOrEqual(t, packed.Total, 330.0)

	// Three years of horizon weigh the three-year term, which saves more.
	long := base
	long.Horizon = 3 * 365 * day
	l, err := Plan(long)
	require.NoError(t, err)
	require.Equal(t, float64(ReservedLongTermMonths), l.Bill.Reserved.TermMonths)
	require.Greater(t, l.Bill.Reserved.Saves, rs.Saves)
	require.Equal(t, r.Bill.Total, l.Bill.Total)

	// ... unless the prices have none.
	noLong := long
	noLong.Prices = DefaultPrices()
	noLong.Prices.ReservedWCUUpfront3y, noLong.Prices.ReservedWCUHour3y, noLong.Prices.ReservedRCUUpfront3y, noLong.Prices.ReservedRCUHour3y = 0, 0, 0, 0
	n, err := Plan(noLong)
	require.NoError(t, err)
	require.Equal(t, 12.0, n.Bill.Reserved.TermMonths)

	// A horizon shorter than a year weighs no term.
	short := base
	short.Horizon = 180 * day
	s, err := Plan(short)
	require.NoError(t, err)
	require.Nil(t, s.Bill.Reserved)
	require.Nil(t, s.PackedLater.Bill.Reserved)

	// Nothing to reserve: an on-demand hot tier, or under a block.
	onDemand := base
	onDemand.Hot.Billing = BillingOnDemand
	o, err := Plan(onDemand)
	require.NoError(t, err)
	require.Nil(t, o.Bill.Reserved)
	require.Nil(t, o.PackedLater.Bill.Reserved)
	slow := base
	slow.Rate = 50
	sl, err := Plan(slow)
	require.NoError(t, err)
	require.Nil(t, sl.Bill.Reserved)

	// Reservations too dear to save anything are not offered.
	dear := base
	dear.Prices = DefaultPrices()
	dear.Prices.ReservedWCUHour = 100 * dear.Prices.WCUHour
	d, err := Plan(dear)
	require.NoError(t, err)
	require.Nil(t, d.Bill.Reserved)
}

func TestTermName(t *testing.T) {
	require.Equal(t, "1 year", TermName(12))
	require.Equal(t, "3 years", TermName(36))
	require.Equal(t, "18 months", TermName(18))
}
