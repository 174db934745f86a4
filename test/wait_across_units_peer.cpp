// SPDX-License-Identifier: MIT
// wait_across_units_peer.cpp - wait_across_units_peer.c compiled as C++ (the test builds it
// with -std=c++11): the objects a C file and a C++ file pass each other are the same.
#include "wait_across_units_peer.c"
