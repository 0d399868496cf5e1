#!/bin/bash
# timeout: 900
# union-rw-stress with its xfs lower branch marked =rw (issue 11 item
# 3): four workers and a reader race through the union while objects
# of that branch are written, chmodded, truncated, unlinked and removed
# in place there, and those of the other lower branch are copied up.
# Every tree must still match its model, the tmpfs branch stay
# unchanged, no branch hold union metadata, odfck find the ODF clean,
# and a new mount show the same trees.  90 seconds
# (STRESS_SECONDS overrides).
STRESS_RW_LOWER=1
STRESS_SECONDS=${STRESS_SECONDS:-90}
. "$SRC/tests/vm/tests/union-rw-stress.sh"
