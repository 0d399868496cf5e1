# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# The "fresh volume" every corruption case starts from: a new ODF
# volume holding one of each kind of union metadata, so a repair can be
# seen to keep what it should.  Sourced by run_cases.sh with $E (odfedit)
# and $IMG set.
$E "$IMG" branch-add /srv/upper rw
$E "$IMG" branch-add /media/dvd ro
$E "$IMG" whiteout /a/b/c
$E "$IMG" opaque /a/d
$E "$IMG" redirect /x/new /x/old
$E "$IMG" whiteout /x/old
$E "$IMG" copyup 2 100 1 500
$E "$IMG" bigino 2 0x1000000000000 >/dev/null
$E "$IMG" rd-build 2 alpha beta gamma
$E "$IMG" rd-append 2 delta >/dev/null
$E "$IMG" rd-tomb 2 beta
