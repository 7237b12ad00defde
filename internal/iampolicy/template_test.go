package iampolicy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const sample = `
Parameters:
  Prefix: {Type: String, Default: tt_}
  Meta: {Type: String}
  Key: {Type: String, Default: ""}
Conditions:
  HasKey: !Not [!Equals [!Ref Key, ""]]
  Both: {"Fn::And": [{Condition: HasKey}, !Equals [!Ref Prefix, tt_]]}
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Policies:
        - Statement:
            - Sid: Tables
              Effect: Allow
              Action: dynamodb:UpdateTable
              Resource: !Sub arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${Prefix}*
              Condition:
                StringEquals:
                  aws:ResourceTag/timetable:meta: !Ref Meta
            - Sid: Var
              Effect: Allow
              Action: [s3:GetObject]
              Resource:
                Fn::Sub: ["arn:aws:s3:::${B}/${!aws:username}/*", {B: !Ref Meta}]
        - !If
          - Both
          - Statement:
              - Sid: Key
                Effect: Allow
                Action: kms:Decrypt
                Resource: !Ref Key
          - !Ref AWS::NoValue
`

func TestFunctionPolicies(t *testing.T) {
	params := map[string]string{"Meta": "meta_a", "AWS::Region": "eu-west-1", "AWS::AccountId": "111122223333"}
	got, err := FunctionPolicies([]byte(sample), "Fn", params)
	require.NoError(t, err)
	require.Equal(t, []Statement{
		{Sid: "Tables", Effect: Allow, Action: []string{"dynamodb:UpdateTable"},
			Resource:  []string{"arn:aws:dynamodb:eu-west-1:111122223333:table/tt_*"},
			Condition: map[string]map[string][]string{"StringEquals": {"aws:ResourceTag/timetable:meta": {"meta_a"}}}},
		{Sid: "Var", Effect: Allow, Action: []string{"s3:GetObject"}, Resource: []string{"arn:aws:s3:::meta_a/${aws:username}/*"}},
	}, got)

	params["Key"] = "arn:aws:kms:eu-west-1:111122223333:key/k"
	got, err = FunctionPolicies([]byte(sample), "Fn", params)
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, []string{"arn:aws:kms:eu-west-1:111122223333:key/k"}, got[2].Resource)

	params["Prefix"] = "xx_"
	got, err = FunctionPolicies([]byte(sample), "Fn", params)
	require.NoError(t, err)
	require.Len(t, got, 2, "Both is false")
	require.Equal(t, []string{"arn:aws:dynamodb:eu-west-1:111122223333:table/xx_*"}, got[0].Resource)

	_, err = FunctionPolicies([]byte(sample), "Fn", map[string]string{"Meta": "m"})
	require.ErrorContains(t, err, "AWS::Region", "a pseudo parameter not given")
	_, err = FunctionPolicies([]byte(sample), "Nope", params)
	require.ErrorContains(t, err, "no resource")
	_, err = FunctionPolicies([]byte("Resources: {F: {Type: AWS::Serverless::Function, Properties: {Policies: [AmazonDynamoDBFullAccess]}}}"), "F", params)
	require.ErrorContains(t, err, "not an inline policy")
	_, err = FunctionPolicies([]byte("Resources: {F: !Bogus x}"), "F", params)
	require.ErrorContains(t, err, "unknown tag")
}
