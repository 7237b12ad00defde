package dynamofault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// ControlPlane is an http.RoundTripper that keeps DynamoDB's control-plane
// rules in front of a local server that keeps none of them, and answers
// for the table settings the local servers ignore or lack. Neither
// dynalite nor DynamoDB Local 1.25.1 enforces a limit on how often a
// table changes (DynamoDB Local took six switches to on demand in a few
// seconds), both ignore TableClass, WarmThroughput, OnDemandThroughput
// and DeletionProtectionEnabled, and neither has point-in-time recovery
// (internal/dynamotest lists what each lacks).
//
// The rules, per table, as the Developer Guide states them:
//
//   - four switches from provisioned to on demand in any 24 hours
//     ("Considerations when switching capacity modes in DynamoDB");
//   - four decreases of provisioned capacity in a UTC day, then one more
//     whenever there was none in the last hour, up to 27 in the day
//     ("Service, account, and table quotas": provisioned throughput
//     decreases);
//   - two changes of table class in 30 days ("Table classes");
//   - one change of TTL an hour ("Time to Live": a TTL change takes up to
//     an hour, and another change meanwhile is refused).
//
// A request that breaks one is answered as DynamoDB answers it, 400
// LimitExceededException (capacity and class) or ValidationException
// (TTL), and not forwarded; the refusal is recorded (Refusals). The
// error codes are DynamoDB's; the messages are this layer's own wording
// of the rule, as the SDK and timetable look only at the code.
//
// What the servers ignore is taken out of the request before it is
// forwarded, recorded, and put back into every TableDescription
// answered (TableClassSummary, OnDemandThroughput, WarmThroughput with
// status ACTIVE, DeletionProtectionEnabled); an UpdateTable that asked
// for nothing else is answered here. DeleteTable of a protected table is
// refused with DynamoDB's ValidationException. UpdateContinuousBackups
// and DescribeContinuousBackups are answered here, from the record,
// shaped as AWS documents them (ContinuousBackupsDescription). With
// ControlPlaneOptions.Exports, the export to S3 and import from S3 are
// answered too (export.go).
//
// Time is Options.Now, so that a test on a fake clock walks a year of
// rules in seconds. A ControlPlane may be used by any number of
// goroutines at once.
type ControlPlane struct {
	next    http.RoundTripper
	now     func() time.Time
	exports bool

	mu struct {
		sync.Mutex
		tables   map[string]*tableState
		calls    map[string]int
		refusals []Refusal

		exports, exportTokens map[string]*exportJob
		imports, importTokens map[string]*importJob
	}
}

// ControlPlaneOptions configure a ControlPlane.
type ControlPlaneOptions struct {
	// Now is the time the rules are kept by. Default time.Now.
	Now func() time.Time
	// Next carries the requests forwarded. Default http.DefaultTransport.
	Next http.RoundTripper
	// Exports answers ExportTableToPointInTime, DescribeExport,
	// ImportTable and DescribeImport on the S3 server of the standard
	// AWS configuration chain (export.go), as DynamoDB does; without it
	// they go to the server behind, which answers
	// UnknownOperationException.
	Exports bool
}

// Refusal is a request the ControlPlane refused.
type Refusal struct {
	Operation, Table string
	// Code and Message are the error answered.
	Code, Message string
	At            time.Time
}

// Limits of DynamoDB's control plane per table.
const (
	MaxOnDemandSwitches   = 4
	OnDemandSwitchWindow  = 24 * time.Hour
	FreeDecreasesPerDay   = 4
	MaxDecreasesPerDay    = 27
	DecreaseInterval      = time.Hour
	MaxClassChanges       = 2
	ClassChangeWindow     = 30 * 24 * time.Hour
	TTLChangeInterval     = time.Hour
	MaxPITRRecoveryPeriod = 35
)

type tableState struct {
	switches  []time.Time // to on demand
	decreases []time.Time
	classes   []time.Time // class changes
	ttl       []time.Time

	class               string
	classUpdated        time.Time
	maxRead, maxWrite   int64
	warmRead, warmWrite int64
	protected           bool
	pitr                bool
	pitrDays            int
	pitrSince           time.Time
}

// NewControlPlane returns a ControlPlane.
func NewControlPlane(opts ControlPlaneOptions) *ControlPlane {
	if opts.Next == nil {
		opts.Next = http.DefaultTransport
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &ControlPlane{next: opts.Next, now: opts.Now, exports: opts.Exports}
	c.mu.tables = map[string]*tableState{}
	c.mu.exports, c.mu.exportTokens = map[string]*exportJob{}, map[string]*exportJob{}
	c.mu.imports, c.mu.importTokens = map[string]*importJob{}, map[string]*importJob{}
	c.mu.calls = map[string]int{}
	return c
}

// Refusals returns the requests refused so far, oldest first.
func (c *ControlPlane) Refusals() []Refusal {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Refusal(nil), c.mu.refusals...)
}

// Calls returns how many requests of each control-plane operation came,
// refused or not (CreateTable, UpdateTable, DeleteTable,
// UpdateTimeToLive, UpdateContinuousBackups, DescribeContinuousBackups,
// and with ControlPlaneOptions.Exports ExportTableToPointInTime,
// DescribeExport, ImportTable and DescribeImport),
// and "UpdateTable:class", "UpdateTable:on-demand" and
// "UpdateTable:decrease" for the changes the rules count.
func (c *ControlPlane) Calls() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.mu.calls))
	for k, v := range c.mu.calls {
		out[k] = v
	}
	return out
}

// TableSettings is what the ControlPlane recorded of a table.
type TableSettings struct {
	Class               string
	MaxRead, MaxWrite   int64
	WarmRead, WarmWrite int64
	DeletionProtection  bool
	PITRDays            int // 0 when off
	ClassChanges        []time.Time
}

// Settings returns what the ControlPlane recorded of a table.
func (c *ControlPlane) Settings(table string) TableSettings {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.stateLocked(table)
	s := TableSettings{Class: st.class, MaxRead: st.maxRead, MaxWrite: st.maxWrite, WarmRead: st.warmRead, WarmWrite: st.warmWrite,
		DeletionProtection: st.protected, ClassChanges: append([]time.Time(nil), st.classes...)}
	if st.pitr {
		s.PITRDays = st.pitrDays
	}
	return s
}

func (c *ControlPlane) stateLocked(table string) *tableState {
	st, ok := c.mu.tables[table]
	if !ok {
		st = &tableState{class: "STANDARD"}
		c.mu.tables[table] = st
	}
	return st
}

// The extended fields the local servers ignore, taken out of requests.
var extended = []string{"TableClass", "WarmThroughput", "OnDemandThroughput", "DeletionProtectionEnabled"}

// RoundTrip keeps the rules, answers what the servers lack, and forwards
// the rest.
func (c *ControlPlane) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, fmt.Errorf("dynamofault: read request body: %w", err)
		}
		req.Body.Close()
	}
	op := req.Header.Get("X-Amz-Target")
	if i := strings.LastIndexByte(op, '.'); i >= 0 {
		op = op[i+1:]
	}
	var in map[string]any
	switch op {
	case "CreateTable", "UpdateTable", "DeleteTable", "DescribeTable", "UpdateTimeToLive", "UpdateContinuousBackups", "DescribeContinuousBackups":
		if err := json.Unmarshal(body, &in); err != nil {
			return c.forward(req, body)
		}
	case "ExportTableToPointInTime", "DescribeExport", "ImportTable", "DescribeImport":
		if !c.exports {
			return c.forward(req, body)
		}
		if err := json.Unmarshal(body, &in); err != nil {
			return errorResponse(req, http.StatusBadRequest, "SerializationException", err.Error()), nil
		}
	default:
		return c.forward(req, body)
	}
	table, _ := in["TableName"].(string)
	if op != "DescribeTable" {
		c.mu.Lock()
		c.mu.calls[op]++
		c.mu.Unlock()
	}
	switch op {
	case "CreateTable":
		return c.createTable(req, in, table)
	case "UpdateTable":
		return c.updateTable(req, in, table)
	case "DeleteTable":
		return c.deleteTable(req, body, table)
	case "DescribeTable":
		return c.patched(c.forward(req, body))
	case "UpdateTimeToLive":
		return c.updateTTL(req, body, table)
	case "UpdateContinuousBackups":
		return c.updateBackups(req, in, table)
	case "ExportTableToPointInTime":
		return c.exportTable(req, in)
	case "DescribeExport":
		return c.describeExport(req, in)
	case "ImportTable":
		return c.importTable(req, in)
	case "DescribeImport":
		return c.describeImport(req, in)
	default: // DescribeContinuousBackups
		return c.describeBackups(req, table)
	}
}

func (c *ControlPlane) createTable(req *http.Request, in map[string]any, table string) (*http.Response, error) {
	ext := take(in)
	resp, err := c.forward(req, mustJSON(in))
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	c.mu.Lock()
	st := &tableState{class: "STANDARD"}
	c.mu.tables[table] = st
	st.apply(ext, c.now())
	c.mu.Unlock()
	return c.patched(resp, nil)
}

func (c *ControlPlane) updateTable(req *http.Request, in map[string]any, table string) (*http.Response, error) {
	cur, resp, err := c.describe(req, table)
	if cur == nil {
		return resp, err
	}
	now := c.now()
	ext := take(in)
	c.mu.Lock()
	st := c.stateLocked(table)
	toOnDemand := in["BillingMode"] == "PAY_PER_REQUEST" && billingOf(cur) == "PROVISIONED"
	decrease := false
	if pt, ok := in["ProvisionedThroughput"].(map[string]any); ok && billingOf(cur) == "PROVISIONED" {
		old, _ := cur["ProvisionedThroughput"].(map[string]any)
		decrease = num(pt["ReadCapacityUnits"]) < num(old["ReadCapacityUnits"]) || num(pt["WriteCapacityUnits"]) < num(old["WriteCapacityUnits"])
	}
	class, _ := ext["TableClass"].(string)
	classChange := class != "" && class != st.class
	var code, msg string
	switch {
	case toOnDemand && len(since(st.switches, now, OnDemandSwitchWindow)) >= MaxOnDemandSwitches:
		code, msg = "LimitExceededException", fmt.Sprintf("Subscriber limit exceeded: table %s switched to on-demand mode %d times in the last 24 hours", table, MaxOnDemandSwitches)
	case decrease && !decreaseAllowed(st.decreases, now):
		code, msg = "LimitExceededException", fmt.Sprintf("Subscriber limit exceeded: Provisioned throughput decreases are limited within a given UTC day. After the first %d decreases, each subsequent decrease in the same UTC day can be performed at most once every %d minutes. Number of decreases today: %d",
			FreeDecreasesPerDay, int(DecreaseInterval.Minutes()), len(today(st.decreases, now)))
	case classChange && len(since(st.classes, now, ClassChangeWindow)) >= MaxClassChanges:
		code, msg = "LimitExceededException", fmt.Sprintf("Subscriber limit exceeded: the table class of %s can be updated at most %d times in 30 days", table, MaxClassChanges)
	}
	if code != "" {
		c.refuseLocked("UpdateTable", table, code, msg, now)
		c.mu.Unlock()
		return errorResponse(req, http.StatusBadRequest, code, msg), nil
	}
	if toOnDemand {
		st.switches = append(since(st.switches, now, OnDemandSwitchWindow), now)
		c.mu.calls["UpdateTable:on-demand"]++
	}
	if decrease {
		st.decreases = append(today(st.decreases, now), now)
		c.mu.calls["UpdateTable:decrease"]++
	}
	if classChange {
		st.classes = append(since(st.classes, now, ClassChangeWindow), now)
		c.mu.calls["UpdateTable:class"]++
	}
	c.mu.Unlock()

	if len(in) > 1 { // more than TableName: the server has work to do
		resp, err := c.forward(req, mustJSON(in))
		if err != nil || resp.StatusCode != http.StatusOK {
			c.undo(table, toOnDemand, decrease, classChange)
			return resp, err
		}
		c.mu.Lock()
		st.apply(ext, now)
		c.mu.Unlock()
		return c.patched(resp, nil)
	}
	c.mu.Lock()
	st.apply(ext, now)
	c.mu.Unlock()
	return c.answer(req, map[string]any{"TableDescription": cur})
}

// undo forgets the changes of an update the server refused.
func (c *ControlPlane) undo(table string, toOnDemand, decrease, classChange bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.stateLocked(table)
	drop := func(ts []time.Time, did bool) []time.Time {
		if did && len(ts) > 0 {
			return ts[:len(ts)-1]
		}
		return ts
	}
	st.switches, st.decreases, st.classes = drop(st.switches, toOnDemand), drop(st.decreases, decrease), drop(st.classes, classChange)
}

func (c *ControlPlane) deleteTable(req *http.Request, body []byte, table string) (*http.Response, error) {
	c.mu.Lock()
	protected := c.stateLocked(table).protected
	if protected {
		msg := "Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first."
		c.refuseLocked("DeleteTable", table, "ValidationException", msg, c.now())
		c.mu.Unlock()
		return errorResponse(req, http.StatusBadRequest, "ValidationException", msg), nil
	}
	c.mu.Unlock()
	resp, err := c.forward(req, body)
	if err == nil && resp.StatusCode == http.StatusOK {
		c.mu.Lock()
		delete(c.mu.tables, table)
		c.mu.Unlock()
	}
	return resp, err
}

func (c *ControlPlane) updateTTL(req *http.Request, body []byte, table string) (*http.Response, error) {
	now := c.now()
	c.mu.Lock()
	st := c.stateLocked(table)
	if len(since(st.ttl, now, TTLChangeInterval)) > 0 {
		msg := "Time to live has been modified multiple times within a fixed interval"
		c.refuseLocked("UpdateTimeToLive", table, "ValidationException", msg, now)
		c.mu.Unlock()
		return errorResponse(req, http.StatusBadRequest, "ValidationException", msg), nil
	}
	c.mu.Unlock()
	resp, err := c.forward(req, body)
	if err == nil && resp.StatusCode == http.StatusOK {
		c.mu.Lock()
		st.ttl = append(since(st.ttl, now, TTLChangeInterval), now)
		c.mu.Unlock()
	}
	return resp, err
}

func (c *ControlPlane) updateBackups(req *http.Request, in map[string]any, table string) (*http.Response, error) {
	if cur, resp, err := c.describe(req, table); cur == nil {
		return resp, err
	}
	spec, _ := in["PointInTimeRecoverySpecification"].(map[string]any)
	on, _ := spec["PointInTimeRecoveryEnabled"].(bool)
	days := int(num(spec["RecoveryPeriodInDays"]))
	if on && days == 0 {
		days = MaxPITRRecoveryPeriod
	}
	if on && (days < 1 || days > MaxPITRRecoveryPeriod) {
		return errorResponse(req, http.StatusBadRequest, "ValidationException",
			fmt.Sprintf("1 validation error detected: Value '%d' at 'pointInTimeRecoverySpecification.recoveryPeriodInDays' failed to satisfy constraint: Member must have value between 1 and 35", days)), nil
	}
	now := c.now()
	c.mu.Lock()
	st := c.stateLocked(table)
	if on && !st.pitr {
		st.pitrSince = now
	}
	st.pitr, st.pitrDays = on, days
	out := st.backupsLocked(now)
	c.mu.Unlock()
	return c.answer(req, out)
}

func (c *ControlPlane) describeBackups(req *http.Request, table string) (*http.Response, error) {
	if cur, resp, err := c.describe(req, table); cur == nil {
		return resp, err
	}
	c.mu.Lock()
	out := c.stateLocked(table).backupsLocked(c.now())
	c.mu.Unlock()
	return c.answer(req, out)
}

// backupsLocked is the answer of both continuous-backup calls.
func (st *tableState) backupsLocked(now time.Time) map[string]any {
	p := map[string]any{"PointInTimeRecoveryStatus": "DISABLED"}
	if st.pitr {
		earliest := st.pitrSince
		if w := now.Add(-time.Duration(st.pitrDays) * 24 * time.Hour); w.After(earliest) {
			earliest = w
		}
		p = map[string]any{
			"PointInTimeRecoveryStatus":  "ENABLED",
			"RecoveryPeriodInDays":       st.pitrDays,
			"EarliestRestorableDateTime": float64(earliest.UnixMilli()) / 1000,
			"LatestRestorableDateTime":   float64(now.Add(-5*time.Minute).UnixMilli()) / 1000,
		}
	}
	return map[string]any{"ContinuousBackupsDescription": map[string]any{
		"ContinuousBackupsStatus":        "ENABLED",
		"PointInTimeRecoveryDescription": p,
	}}
}

// apply records the extended settings of a request.
func (st *tableState) apply(ext map[string]any, now time.Time) {
	if v, ok := ext["TableClass"].(string); ok && v != "" && v != st.class {
		st.class, st.classUpdated = v, now
	}
	if m, ok := ext["OnDemandThroughput"].(map[string]any); ok {
		st.maxRead, st.maxWrite = max(num(m["MaxReadRequestUnits"]), 0), max(num(m["MaxWriteRequestUnits"]), 0)
	}
	if m, ok := ext["WarmThroughput"].(map[string]any); ok {
		if r := num(m["ReadUnitsPerSecond"]); r > 0 {
			st.warmRead = r
		}
		if w := num(m["WriteUnitsPerSecond"]); w > 0 {
			st.warmWrite = w
		}
	}
	if v, ok := ext["DeletionProtectionEnabled"].(bool); ok {
		st.protected = v
	}
}

// describe forwards a DescribeTable of the table and returns its
// TableDescription, or nil and the answer to give when it failed.
func (c *ControlPlane) describe(req *http.Request, table string) (map[string]any, *http.Response, error) {
	dreq := req.Clone(req.Context())
	dreq.Header = req.Header.Clone()
	dreq.Header.Set("X-Amz-Target", "DynamoDB_20120810.DescribeTable")
	resp, err := c.forward(dreq, mustJSON(map[string]any{"TableName": table}))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, nil, fmt.Errorf("dynamofault: describe table: %w", err)
	}
	t, _ := out["Table"].(map[string]any)
	if t == nil {
		return nil, nil, fmt.Errorf("dynamofault: describe table %q: no table in the answer", table)
	}
	return t, nil, nil
}

// patched puts what the ControlPlane recorded into the TableDescription
// of an answer (Table or TableDescription).
func (c *ControlPlane) patched(resp *http.Response, err error) (*http.Response, error) {
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if json.Unmarshal(body, &out) != nil {
		return response(resp.Request, resp.StatusCode, resp.Header, body), nil
	}
	for _, k := range []string{"Table", "TableDescription"} {
		t, ok := out[k].(map[string]any)
		if !ok {
			continue
		}
		name, _ := t["TableName"].(string)
		c.mu.Lock()
		st := c.stateLocked(name)
		c.describeLocked(st, t)
		c.mu.Unlock()
	}
	return response(resp.Request, resp.StatusCode, resp.Header, mustJSON(out)), nil
}

// describeLocked writes a table's recorded settings into its description
// as DescribeTable shapes them.
func (c *ControlPlane) describeLocked(st *tableState, t map[string]any) {
	summary := map[string]any{"TableClass": st.class}
	if !st.classUpdated.IsZero() {
		summary["LastUpdateDateTime"] = float64(st.classUpdated.UnixMilli()) / 1000
	}
	t["TableClassSummary"] = summary
	t["DeletionProtectionEnabled"] = st.protected
	if billingOf(t) == "PAY_PER_REQUEST" {
		if st.maxRead != 0 || st.maxWrite != 0 {
			t["OnDemandThroughput"] = map[string]any{"MaxReadRequestUnits": unbounded(st.maxRead), "MaxWriteRequestUnits": unbounded(st.maxWrite)}
		}
		// Every on-demand table is described with a warm throughput: at
		// least what a new table starts with.
		t["WarmThroughput"] = map[string]any{
			"ReadUnitsPerSecond":  max(st.warmRead, 12000),
			"WriteUnitsPerSecond": max(st.warmWrite, 4000),
			"Status":              "ACTIVE",
		}
	}
}

func unbounded(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}

func (c *ControlPlane) refuseLocked(op, table, code, msg string, now time.Time) {
	c.mu.refusals = append(c.mu.refusals, Refusal{Operation: op, Table: table, Code: code, Message: msg, At: now})
}

func (c *ControlPlane) answer(req *http.Request, out map[string]any) (*http.Response, error) {
	return response(req, http.StatusOK, http.Header{}, mustJSON(out)), nil
}

func (c *ControlPlane) forward(req *http.Request, body []byte) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	return c.next.RoundTrip(out)
}

// take removes the extended fields from a request and returns them.
func take(in map[string]any) map[string]any {
	ext := map[string]any{}
	for _, k := range extended {
		if v, ok := in[k]; ok {
			ext[k] = v
			delete(in, k)
		}
	}
	return ext
}

// decreaseAllowed applies DynamoDB's rule on decreases to the decreases
// of a table so far: four in a UTC day at any time, then one more when
// the last was an hour ago or more, up to 27 in the day.
func decreaseAllowed(decreases []time.Time, now time.Time) bool {
	d := today(decreases, now)
	switch {
	case len(d) < FreeDecreasesPerDay:
		return true
	case len(d) >= MaxDecreasesPerDay:
		return false
	}
	return now.Sub(d[len(d)-1]) >= DecreaseInterval
}

// today returns the times of ts in now's UTC day.
func today(ts []time.Time, now time.Time) []time.Time {
	day := now.UTC().Truncate(24 * time.Hour)
	var out []time.Time
	for _, t := range ts {
		if !t.Before(day) {
			out = append(out, t)
		}
	}
	return out
}

// since returns the times of ts less than window before now.
func since(ts []time.Time, now time.Time, window time.Duration) []time.Time {
	var out []time.Time
	for _, t := range ts {
		if now.Sub(t) < window {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

func billingOf(t map[string]any) string {
	if s, ok := t["BillingModeSummary"].(map[string]any); ok {
		if b, _ := s["BillingMode"].(string); b != "" {
			return b
		}
	}
	return "PROVISIONED"
}

func num(v any) int64 {
	switch n := v.(type) {
	case float64:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
