package influxql

import (
	"errors"
	"fmt"

	iql "github.com/influxdata/influxql"
)

// # Which database a statement reads
//
// A tenant has one database, its data, known by any name: the db
// parameter names it whatever it says (Options.Database), so that a
// client configured with a name of its own reads the tenant. A
// statement names its database as InfluxDB's do, by the db parameter or
// by ON db or FROM db.rp.m, and a statement that needs one (every one
// but SHOW DATABASES and CREATE DATABASE) is refused without it, with
// InfluxDB's "database name required". A name in the statement other
// than the db parameter is another database, which does not exist:
// "database not found: name" (SHOW MEASUREMENTS ON it answers nothing, as
// InfluxDB 1.x does). The one retention policy is autogen; FROM naming
// another is "retention policy not found: name".

// ErrDatabaseRequired is the error of a statement that names no
// database, with no db parameter.
var ErrDatabaseRequired = errors.New("database name required")

// errNoSuchDatabase marks a SHOW MEASUREMENTS ON a database that is not
// the tenant's, which answers nothing.
var errNoSuchDatabase = errors.New("database not found")

// retentionPolicy is the one retention policy a database has.
const retentionPolicy = "autogen"

// checkDatabase checks the database a statement names, as the rule
// above says.
func (x *executor) checkDatabase(st iql.Statement) error {
	var named []string // databases named in the statement
	var policies []string
	switch st := st.(type) {
	case *iql.ShowDatabasesStatement, *iql.CreateDatabaseStatement:
		return nil
	case *iql.SelectStatement:
		for _, m := range st.Sources.Measurements() {
			named = append(named, m.Database)
			policies = append(policies, m.RetentionPolicy)
		}
		// A subquery's sources are its own, checked as it runs.
	case *iql.ShowMeasurementsStatement:
		if st.Database != "" && x.opts.Database != "" && st.Database != x.opts.Database {
			return errNoSuchDatabase
		}
		named = append(named, st.Database)
	case *iql.ShowTagKeysStatement:
		named = append(named, st.Database)
	case *iql.ShowTagValuesStatement:
		named = append(named, st.Database)
	case *iql.ShowFieldKeysStatement:
		named = append(named, st.Database)
	case *iql.ShowSeriesStatement:
		named = append(named, st.Database)
	case *iql.ShowRetentionPoliciesStatement:
		named = append(named, st.Database)
	case *iql.ShowMeasurementCardinalityStatement:
		named = append(named, st.Database)
	case *iql.ShowSeriesCardinalityStatement:
		named = append(named, st.Database)
	case *iql.ShowTagKeyCardinalityStatement:
		named = append(named, st.Database)
	case *iql.ShowTagValuesCardinalityStatement:
		named = append(named, st.Database)
	case *iql.ShowFieldKeyCardinalityStatement:
		named = append(named, st.Database)
	}
	db := x.opts.Database
	for _, n := range named {
		switch {
		case n == "":
			if db == "" {
				return ErrDatabaseRequired
			}
		case db == "":
			db = n
		case n != db:
			return fmt.Errorf("database not found: %s", n)
		}
	}
	if db == "" {
		return ErrDatabaseRequired
	}
	for _, p := range policies {
		if p != "" && p != retentionPolicy {
			return fmt.Errorf("retention policy not found: %s", p)
		}
	}
	return nil
}
