#!/bin/bash
# timeout: 3000
# The long run of union-odf-damage (make check-long): the same damaged
# ODF images, mounted and used, for 40 minutes of mutations (some
# hundreds under TCG) instead of a few; DAMAGE_SECONDS overrides it.
DAMAGE_SECONDS=${DAMAGE_SECONDS:-2400}
export DAMAGE_SECONDS
. "$SRC/tests/vm/tests/union-odf-damage.sh"
