#!/bin/bash
# timeout: 3000
# The long run of union-odf-damage (make check-long): the same damaged
# ODF images, over an xfs lower branch, mounted and used for 40 minutes
# of mutations (several hundred under TCG) instead of 2.5;
# DAMAGE_SECONDS and DAMAGE_LOWER override it.
DAMAGE_SECONDS=${DAMAGE_SECONDS:-2400}
DAMAGE_LOWER=${DAMAGE_LOWER:-xfs}
export DAMAGE_SECONDS DAMAGE_LOWER
. "$SRC/tests/vm/tests/union-odf-damage.sh"
