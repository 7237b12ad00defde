#!/usr/bin/env bash
# with-dynalite.sh CMD [ARGS...]
#
# Runs CMD with dynalite on loopback: scripts/with-dynamodb.sh dynalite.
# When TIMETABLE_DYNAMODB_ENDPOINT is already set (DynamoDB Local, another
# dynalite, a real endpoint), the script runs CMD against it and starts
# nothing.
set -euo pipefail
if [ -n "${TIMETABLE_DYNAMODB_ENDPOINT:-}" ]; then
	export AWS_ENDPOINT_URL_DYNAMODB="${AWS_ENDPOINT_URL_DYNAMODB:-$TIMETABLE_DYNAMODB_ENDPOINT}"
	exec "$@"
fi
exec "$(dirname "$0")/with-dynamodb.sh" dynalite "$@"
