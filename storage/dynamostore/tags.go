package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Tags are labels, best effort. timetable keeps every fact it needs of a
// table in its table registry (package registry), in the meta table; the
// tags it asks for are cost-allocation labels for people and billing
// reports. So a tag call that fails does not fail the table's creation or
// update: an endpoint without tagging (DynamoDB Local answers
// UnknownOperationException) is logged once, at info level, and never
// asked again, and any
// other failure (a role without dynamodb:TagResource) is logged with the
// table's name. DescribeTable reports no tags where the endpoint has none,
// or the role may not read them.

// labelTable adds tags to a table, best effort. arn is the table's ARN,
// looked up when "".
func (s *Store) labelTable(ctx context.Context, name, arn string, tags map[string]string) {
	if s.noTagging.Load() {
		return
	}
	err := s.tag(ctx, name, arn, tags)
	switch {
	case err == nil:
	case isUnknownOperation(err):
		s.noTagging.Store(true)
		s.warnNoTagging(err)
	default:
		s.log.Warn("tables are made without tags when tagging fails; timetable keeps table facts in its registry",
			"table", name, "err", err)
	}
}

// warnNoTagging logs, once per Store and at info level, that the
// endpoint has no tagging: a local server's (DynamoDB Local), which
// loses nothing timetable needs, so that every CLI command against it
// (at warn level) is not met with the same warning.
func (s *Store) warnNoTagging(err error) {
	s.taggingWarning.Do(func() {
		s.log.Info("dynamodb endpoint does not support tagging: tables get no tags (timetable keeps table facts in its registry)",
			"err", err)
	})
}

// tag adds tags to a table, replacing those of the same key. arn is the
// table's ARN, looked up when "".
func (s *Store) tag(ctx context.Context, name, arn string, tags map[string]string) error {
	if arn == "" {
		var err error
		if arn, err = s.tableARN(ctx, name); err != nil {
			return err
		}
	}
	_, err := s.client.TagResource(ctx, &dynamodb.TagResourceInput{
		ResourceArn: aws.String(arn),
		Tags:        tagsInput(tags),
	}, s.callOpts...)
	if err != nil {
		return fmt.Errorf("tag table %q: %w", name, mapError(opChange, err))
	}
	return nil
}

// tableARN returns the ARN of a table, which tag operations address it by.
func (s *Store) tableARN(ctx context.Context, name string) (string, error) {
	out, err := s.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, s.callOpts...)
	if err != nil {
		return "", fmt.Errorf("describe table %q: %w", name, mapError(opOther, err))
	}
	return aws.ToString(out.Table.TableArn), nil
}

// tags returns the tags of the table with the given ARN, following
// ListTagsOfResource's pages; nil when it has none, when the endpoint has
// no tagging, and when the role may not read them (logged).
func (s *Store) tags(ctx context.Context, name, arn string) (map[string]string, error) {
	if s.noTagging.Load() {
		return nil, nil
	}
	var tags map[string]string
	in := &dynamodb.ListTagsOfResourceInput{ResourceArn: aws.String(arn)}
	for {
		out, err := s.client.ListTagsOfResource(ctx, in, s.callOpts...)
		switch {
		case isUnknownOperation(err):
			s.noTagging.Store(true)
			s.warnNoTagging(err)
			return nil, nil
		case isAccessDenied(err):
			s.log.Warn("cannot read a table's tags; they are only labels", "table", name, "err", err)
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("list tags of table %q: %w", name, mapError(opOther, err))
		}
		for _, t := range out.Tags {
			if tags == nil {
				tags = make(map[string]string)
			}
			tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
		if out.NextToken == nil {
			return tags, nil
		}
		in.NextToken = out.NextToken
	}
}
