# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# The "fresh volume" every corruption case starts from: a new ODF
# volume holding one of each kind of union metadata, so a repair can be
# seen to keep what it should.  Sourced by run_cases.sh with $E (odfedit)
# and $IMG set.
$E "$IMG" branch-add /srv/upper rw
$E "$IMG" branch-add /media/dvd ro
# union directories by number: /a/b is 0x1000000000011 (upper inode
# 17), /a/d 0x1000000000012, /x/new 0x1000000000013, /x 0x1000000000014
$E "$IMG" whiteout 0x1000000000011 c
$E "$IMG" node-make 0x1000000000012 opaque 18 7
$E "$IMG" node-make 0x1000000000013 redirect 19 8 2:/x/old
$E "$IMG" whiteout 0x1000000000014 old
$E "$IMG" copyup 2 100 1 500
$E "$IMG" bigino 2 0x1000000000000 >/dev/null
$E "$IMG" rd-build 2 alpha beta gamma
$E "$IMG" rd-append 2 delta >/dev/null
$E "$IMG" rd-tomb 2 beta
