/* golayout.h - where a Go program's runtime keeps what the in-kernel
 * reader follows on aarch64 (bpf/moment_abi.h, struct moment_goproc):
 * the offsets of g.m, g.sched, g.stack.hi, m.g0, m.curg and gobuf's sp,
 * pc, lr and bp, read from the program's DWARF (the runtime's own types,
 * runtime.g, runtime.m, runtime.gobuf and runtime.stack), never assumed:
 * they change between Go versions. */
#ifndef STAX_INGEST_GOLAYOUT_H
#define STAX_INGEST_GOLAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/moment_abi.h"

/* The layout of the Go program at path (build-id bid, bid_size bytes, may
 * be 0) into *gp: true when it is an aarch64 Go program whose DWARF has
 * all of them (false: not Go, not aarch64, stripped of DWARF, or a
 * runtime laid out otherwise than the reader knows). */
bool golayout_read(const char *path, const uint8_t *bid, size_t bid_size, struct moment_goproc *gp);

#endif
