package dynamofault

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Exports to S3 and imports from S3, which neither local server has
// (both answer UnknownOperationException), are answered by a
// ControlPlane made with ControlPlaneOptions.Exports, on the S3 server of
// the standard AWS configuration chain (AWS_ENDPOINT_URL_S3, path-style
// addresses), as AWS documents them:
//
//   - ExportTableToPointInTime needs point-in-time recovery on (else
//     PointInTimeRecoveryUnavailableException) and takes DYNAMODB_JSON
//     only. It scans the table on the server behind and writes the
//     layout of "DynamoDB table export output format" in the Developer
//     Guide: {S3Prefix}/AWSDynamoDB/{ExportId}/_started, data/{id}.json.gz
//     (gzip, one {"Item":{...}} line per item, at most
//     ExportFileItems items a file, one empty file for an empty table),
//     manifest-files.json (one line per data file: itemCount,
//     md5Checksum, etag, dataFileS3Key) and manifest-summary.json
//     (version, exportArn, startTime, endTime, tableArn, tableId,
//     exportTime, s3Bucket, s3Prefix, s3SseAlgorithm,
//     manifestFilesS3Key, billedSizeBytes, itemCount, outputFormat,
//     exportType). The .checksum files beside the manifests are not
//     written. The answer is IN_PROGRESS, and DescribeExport then says
//     COMPLETED with the item count. A ClientToken seen before answers
//     the export it started.
//   - ImportTable reads every object under S3BucketSource's S3KeyPrefix
//     as gzip-compressed DYNAMODB_JSON lines (InputFormat DYNAMODB_JSON,
//     InputCompressionType GZIP only), creates the table of
//     TableCreationParameters on the server behind, waits for it, and
//     writes the items with BatchWriteItem; a table of the name answers
//     ResourceInUseException. DescribeImport then says COMPLETED with
//     ProcessedItemCount, ImportedItemCount and ErrorCount.
//
// So the items exported and imported are the server's, read and written
// for real; only the job around them is this layer's.

// ExportFileItems is the most items the fake export writes to one data
// file: a table of more is written as several, as AWS's export writes a
// file per partition at least.
const ExportFileItems = 1000

type exportJob struct {
	desc map[string]any
}

type importJob struct {
	desc map[string]any
}

func (c *ControlPlane) s3Client(ctx context.Context) (*s3.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("dynamofault: load AWS configuration for S3: %w", err)
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true }), nil
}

// call sends one request of operation op to the server behind and
// decodes its answer; an answer that is not 200 is returned as resp.
func (c *ControlPlane) call(req *http.Request, op string, in any) (out map[string]any, resp *http.Response, err error) {
	r := req.Clone(req.Context())
	r.Header = req.Header.Clone()
	r.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	resp, err = c.forward(r, mustJSON(in))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, resp, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, nil, fmt.Errorf("dynamofault: %s: %w", op, err)
	}
	return out, nil, nil
}

func (c *ControlPlane) exportTable(req *http.Request, in map[string]any) (*http.Response, error) {
	tableARN, _ := in["TableArn"].(string)
	table := tableARN[strings.LastIndex(tableARN, "table/")+len("table/"):]
	token, _ := in["ClientToken"].(string)
	c.mu.Lock()
	if j, ok := c.mu.exportTokens[token]; ok && token != "" {
		desc := j.desc
		c.mu.Unlock()
		return c.answer(req, map[string]any{"ExportDescription": desc})
	}
	pitr := c.stateLocked(table).pitr
	c.mu.Unlock()
	if !pitr {
		return errorResponse(req, http.StatusBadRequest, "PointInTimeRecoveryUnavailableException",
			fmt.Sprintf("Point in time recovery is not enabled for table '%s'", table)), nil
	}
	if f, _ := in["ExportFormat"].(string); f != "" && f != "DYNAMODB_JSON" {
		return errorResponse(req, http.StatusBadRequest, "ValidationException", "dynamofault: only DYNAMODB_JSON exports are faked"), nil
	}
	bucket, _ := in["S3Bucket"].(string)
	prefix, _ := in["S3Prefix"].(string)
	start := c.now().UTC()
	var rnd [4]byte
	rand.Read(rnd[:])
	id := fmt.Sprintf("%014d-%s", start.UnixMilli(), hex.EncodeToString(rnd[:]))
	exportARN := tableARN + "/export/" + id
	dir := id
	if prefix != "" {
		dir = strings.TrimSuffix(prefix, "/") + "/AWSDynamoDB/" + id
	} else {
		dir = "AWSDynamoDB/" + id
	}

	// Read the table as it is now: the export's point in time.
	var items []json.RawMessage
	var last any
	for {
		scan := map[string]any{"TableName": table, "ConsistentRead": true}
		if last != nil {
			scan["ExclusiveStartKey"] = last
		}
		r := req.Clone(req.Context())
		r.Header = req.Header.Clone()
		r.Header.Set("X-Amz-Target", "DynamoDB_20120810.Scan")
		resp, err := c.forward(r, mustJSON(scan))
		if err != nil || resp.StatusCode != http.StatusOK {
			return resp, err
		}
		var page struct {
			Items            []json.RawMessage
			LastEvaluatedKey any
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("dynamofault: scan %s: %w", table, err)
		}
		items = append(items, page.Items...)
		if page.LastEvaluatedKey == nil {
			break
		}
		last = page.LastEvaluatedKey
	}

	ctx := req.Context()
	client, err := c.s3Client(ctx)
	if err != nil {
		return nil, err
	}
	put := func(key string, body []byte) (etag string, err error) {
		out, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
		if err != nil {
			return "", fmt.Errorf("dynamofault: export to s3://%s/%s: %w", bucket, key, err)
		}
		return strings.Trim(aws.ToString(out.ETag), `"`), nil
	}
	if _, err := put(dir+"/_started", nil); err != nil {
		return errorResponse(req, http.StatusBadRequest, "S3ConfigurationError", err.Error()), nil
	}
	var files bytes.Buffer
	var billed int64
	for i := 0; i == 0 || i < len(items); i += ExportFileItems {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		chunk := items[i:min(i+ExportFileItems, len(items))]
		for _, it := range chunk {
			billed += int64(len(it))
			fmt.Fprintf(zw, "{\"Item\":%s}\n", it)
		}
		zw.Close()
		rand.Read(rnd[:])
		key := fmt.Sprintf("%s/data/%s%06d.json.gz", dir, hex.EncodeToString(rnd[:]), i/ExportFileItems)
		etag, err := put(key, buf.Bytes())
		if err != nil {
			return nil, err
		}
		sum := md5.Sum(buf.Bytes())
		files.Write(mustJSON(map[string]any{"itemCount": len(chunk), "md5Checksum": base64.StdEncoding.EncodeToString(sum[:]),
			"etag": etag, "dataFileS3Key": key}))
		files.WriteByte('\n')
	}
	if _, err := put(dir+"/manifest-files.json", files.Bytes()); err != nil {
		return nil, err
	}
	end := c.now().UTC()
	summary := map[string]any{
		"version": "2020-06-30", "exportArn": exportARN,
		"startTime": start.Format(time.RFC3339Nano), "endTime": end.Format(time.RFC3339Nano),
		"tableArn": tableARN, "tableId": table, "exportTime": start.Format(time.RFC3339Nano),
		"s3Bucket": bucket, "s3Prefix": nilIfEmpty(prefix), "s3SseAlgorithm": "AES256", "s3SseKmsKeyId": nil,
		"manifestFilesS3Key": dir + "/manifest-files.json",
		"billedSizeBytes":    billed, "itemCount": len(items),
		"outputFormat": "DYNAMODB_JSON", "exportType": "FULL_EXPORT",
	}
	if _, err := put(dir+"/manifest-summary.json", mustJSON(summary)); err != nil {
		return nil, err
	}
	desc := map[string]any{
		"ExportArn": exportARN, "ExportStatus": "IN_PROGRESS", "TableArn": tableARN, "TableId": table,
		"S3Bucket": bucket, "ExportFormat": "DYNAMODB_JSON", "ExportType": "FULL_EXPORT", "ClientToken": token,
		"StartTime": float64(start.UnixMilli()) / 1000, "ExportTime": float64(start.UnixMilli()) / 1000,
	}
	if prefix != "" {
		desc["S3Prefix"] = prefix
	}
	done := map[string]any{}
	for k, v := range desc {
		done[k] = v
	}
	done["ExportStatus"] = "COMPLETED"
	done["EndTime"] = float64(end.UnixMilli()) / 1000
	done["ItemCount"] = len(items)
	done["BilledSizeBytes"] = billed
	done["ExportManifest"] = dir + "/manifest-summary.json"
	c.mu.Lock()
	c.mu.exports[exportARN] = &exportJob{desc: done}
	if token != "" {
		c.mu.exportTokens[token] = &exportJob{desc: desc}
	}
	c.mu.Unlock()
	return c.answer(req, map[string]any{"ExportDescription": desc})
}

func (c *ControlPlane) describeExport(req *http.Request, in map[string]any) (*http.Response, error) {
	arn, _ := in["ExportArn"].(string)
	c.mu.Lock()
	j, ok := c.mu.exports[arn]
	c.mu.Unlock()
	if !ok {
		return errorResponse(req, http.StatusBadRequest, "ExportNotFoundException", "Export not found: "+arn), nil
	}
	return c.answer(req, map[string]any{"ExportDescription": j.desc})
}

func (c *ControlPlane) importTable(req *http.Request, in map[string]any) (*http.Response, error) {
	token, _ := in["ClientToken"].(string)
	c.mu.Lock()
	if j, ok := c.mu.importTokens[token]; ok && token != "" {
		desc := j.desc
		c.mu.Unlock()
		return c.answer(req, map[string]any{"ImportTableDescription": desc})
	}
	c.mu.Unlock()
	src, _ := in["S3BucketSource"].(map[string]any)
	bucket, _ := src["S3Bucket"].(string)
	prefix, _ := src["S3KeyPrefix"].(string)
	params, _ := in["TableCreationParameters"].(map[string]any)
	table, _ := params["TableName"].(string)
	if f, _ := in["InputFormat"].(string); f != "DYNAMODB_JSON" {
		return errorResponse(req, http.StatusBadRequest, "ValidationException", "dynamofault: only DYNAMODB_JSON imports are faked"), nil
	}
	if z, _ := in["InputCompressionType"].(string); z != "GZIP" {
		return errorResponse(req, http.StatusBadRequest, "ValidationException", "dynamofault: only GZIP imports are faked"), nil
	}
	ctx := req.Context()
	client, err := c.s3Client(ctx)
	if err != nil {
		return nil, err
	}
	// Read the source first: a source that cannot be read makes no
	// table.
	var items []json.RawMessage
	var processed, errs int64
	pages := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return errorResponse(req, http.StatusBadRequest, "ValidationException", fmt.Sprintf("dynamofault: list s3://%s/%s: %v", bucket, prefix, err)), nil
		}
		for _, o := range page.Contents {
			if aws.ToInt64(o.Size) == 0 {
				continue
			}
			obj, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: o.Key})
			if err != nil {
				return nil, fmt.Errorf("dynamofault: import: %w", err)
			}
			p, e, err := importLines(obj.Body, &items)
			obj.Body.Close()
			if err != nil {
				return nil, fmt.Errorf("dynamofault: import %s: %w", aws.ToString(o.Key), err)
			}
			processed, errs = processed+p, errs+e
		}
	}
	create := map[string]any{}
	for _, k := range []string{"TableName", "AttributeDefinitions", "KeySchema", "BillingMode", "ProvisionedThroughput", "GlobalSecondaryIndexes"} {
		if v, ok := params[k]; ok {
			create[k] = v
		}
	}
	out, resp, err := c.call(req, "CreateTable", create)
	if out == nil {
		return resp, err
	}
	tableDesc, _ := out["TableDescription"].(map[string]any)
	tableARN, _ := tableDesc["TableArn"].(string)
	for {
		d, resp, err := c.call(req, "DescribeTable", map[string]any{"TableName": table})
		if d == nil {
			return resp, err
		}
		if t, _ := d["Table"].(map[string]any); t["TableStatus"] == "ACTIVE" {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	for i := 0; i < len(items); i += 25 {
		var reqs []any
		for _, it := range items[i:min(i+25, len(items))] {
			reqs = append(reqs, map[string]any{"PutRequest": map[string]any{"Item": it}})
		}
		pending := map[string]any{table: reqs}
		for len(pending) > 0 {
			out, resp, err := c.call(req, "BatchWriteItem", map[string]any{"RequestItems": pending})
			if out == nil {
				return resp, err
			}
			pending, _ = out["UnprocessedItems"].(map[string]any)
		}
	}
	start := float64(c.now().UnixMilli()) / 1000
	importARN := tableARN + "/import/" + fmt.Sprintf("%014d", c.now().UnixMilli())
	desc := map[string]any{
		"ImportArn": importARN, "ImportStatus": "IN_PROGRESS", "TableArn": tableARN, "TableId": table,
		"ClientToken": token, "S3BucketSource": src, "InputFormat": "DYNAMODB_JSON", "InputCompressionType": "GZIP",
		"TableCreationParameters": params, "StartTime": start,
	}
	done := map[string]any{}
	for k, v := range desc {
		done[k] = v
	}
	done["ImportStatus"] = "COMPLETED"
	done["EndTime"] = start
	done["ProcessedItemCount"] = processed
	done["ImportedItemCount"] = int64(len(items))
	done["ErrorCount"] = errs
	c.mu.Lock()
	c.mu.imports[importARN] = &importJob{desc: done}
	if token != "" {
		c.mu.importTokens[token] = &importJob{desc: desc}
	}
	c.mu.Unlock()
	return c.answer(req, map[string]any{"ImportTableDescription": desc})
}

// importLines reads a gzip-compressed DYNAMODB_JSON object, adding the
// items of its lines; a line that is not {"Item":{...}} is an error of
// the import, counted and skipped, as AWS's import does.
func importLines(r io.Reader, items *[]json.RawMessage) (processed, errs int64, err error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return 0, 0, err
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 1<<16), 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		processed++
		var line struct {
			Item json.RawMessage
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || len(line.Item) == 0 || line.Item[0] != '{' {
			errs++
			continue
		}
		*items = append(*items, line.Item)
	}
	return processed, errs, sc.Err()
}

func (c *ControlPlane) describeImport(req *http.Request, in map[string]any) (*http.Response, error) {
	arn, _ := in["ImportArn"].(string)
	c.mu.Lock()
	j, ok := c.mu.imports[arn]
	c.mu.Unlock()
	if !ok {
		return errorResponse(req, http.StatusBadRequest, "ImportNotFoundException", "Import not found: "+arn), nil
	}
	return c.answer(req, map[string]any{"ImportTableDescription": j.desc})
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
