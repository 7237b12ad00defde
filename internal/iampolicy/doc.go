// Package iampolicy evaluates IAM identity-policy statements against
// requests, so that a test can ask of deploy/template.yaml what AWS would
// answer: is this call, on this resource with these tags, allowed?
//
// It is the part of IAM's policy evaluation logic that one identity
// policy needs ("Policy evaluation logic" in the IAM User Guide): an
// explicit Deny wins, then any Allow, else the request is implicitly
// denied. A statement matches when its Action (or NotAction), its
// Resource (or NotResource) and every condition match. Actions match
// case-insensitively with * and ? wildcards, resources case-sensitively
// with the same wildcards ("IAM JSON policy elements: Resource").
//
// Conditions: every operator of a statement, and every key of an
// operator, must hold (AND); any of a key's values may match (OR). The
// operators are StringEquals, StringNotEquals, StringLike,
// StringNotLike, each with the IfExists suffix, the set qualifiers
// ForAllValues: and ForAnyValue: on the four, Null and Bool. A key
// missing from the request fails a positive operator and passes a
// negated one, IfExists and ForAllValues: (as IAM does). Keys are
// matched case-insensitively, values case-sensitively. Policy variables
// (${aws:username}-like) in resources and condition values are replaced
// from the request's context; an unknown one matches nothing.
//
// Statements come from a SAM or CloudFormation template with
// FunctionPolicies, which resolves Ref, Fn::Sub, Fn::If with the
// template's Conditions (Fn::Equals, Fn::Not, Fn::And, Fn::Or) and
// AWS::NoValue, in their long and short (!Ref, !Sub, !If, !GetAtt …)
// forms, for the parameter values given.
//
// What it does not do: resource-based policies, permission boundaries,
// SCPs, session policies, Principal, and the numeric, date, IP and ARN
// operators; the template uses none of them.
package iampolicy
